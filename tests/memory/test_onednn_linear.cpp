// rlm::nn::linear's oneDNN path against torch::linear (MKL): forward and both gradients, with and without bias, any
// leading dimensions; and the GRU's own step loop (which runs on it) against torch's fused GRU, resets included.
// The two paths are float32 GEMMs with different summation orders, so they agree to ~1e-6 relative, not bitwise.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "memory/gru.hpp"
#include "nn/linear.hpp"

namespace {

/// Runs f with the oneDNN path switched on or off, restoring the previous setting.
template <class F>
auto with_onednn(bool on, F&& f) {
  const bool before = rlm::nn::onednn_linear_enabled();
  rlm::nn::set_onednn_linear(on);
  auto result = f();
  rlm::nn::set_onednn_linear(before);
  return result;
}

struct LinearResult {
  torch::Tensor y, gx, gw, gb;
};

LinearResult run_linear(bool onednn, const torch::Tensor& x0, const torch::Tensor& w0, const torch::Tensor& b0) {
  return with_onednn(onednn, [&] {
    auto x = x0.clone().requires_grad_(true);
    auto w = w0.clone().requires_grad_(true);
    auto b = b0.defined() ? b0.clone().requires_grad_(true) : torch::Tensor();
    auto y = rlm::nn::linear(x, w, b);
    (y * torch::linspace(-1, 1, y.numel()).view(y.sizes())).sum().backward();
    return LinearResult{y.detach(), x.grad(), w.grad(), b.defined() ? b.grad() : torch::Tensor()};
  });
}

/// The bf16 tests need oneDNN's bf16 kernels, which it has natively with AVX512-BF16 or AMX and emulates with AVX-512;
/// without AVX-512 (an AVX2-only CPU, or ONEDNN_MAX_CPU_ISA below it) there are none, and the test reports itself
/// skipped (ctest's SKIP_REGULAR_EXPRESSION), not passed.
bool no_bf16_products_here() {
  if (rlm::nn::onednn_bf16_available()) return false;
  WARN("oneDNN has no bf16 products on this CPU: skipped");
  return true;
}

}  // namespace

TEST_CASE("oneDNN linear: equals torch::linear and its gradients", "[memory][linear]") {
  if (!at::hasMKLDNN()) {
    WARN("libtorch without oneDNN: nothing to compare");
    return;
  }
  torch::manual_seed(3);
  for (const bool bias : {true, false}) {
    INFO("bias " << bias);
    const auto x = torch::randn({8, 40, 96});  // leading dims [8, 40] are flattened and restored
    const auto w = torch::randn({300, 96});
    const auto b = bias ? torch::randn({300}) : torch::Tensor();
    CHECK(rlm::nn::onednn_linear_used(8 * 40, 96, 300));  // large enough for the oneDNN path
    const auto ours = run_linear(true, x, w, b);
    const auto ref = run_linear(false, x, w, b);
    CHECK(ours.y.sizes() == ref.y.sizes());
    CHECK(torch::allclose(ours.y, ref.y, 1e-5, 1e-5));
    CHECK(torch::allclose(ours.gx, ref.gx, 1e-5, 1e-5));
    CHECK(torch::allclose(ours.gw, ref.gw, 1e-5, 1e-4));
    if (bias) CHECK(torch::allclose(ours.gb, ref.gb, 1e-5, 1e-5));
    // Not a copy of the reference path: a wrong weight layout would be far off, not 1e-5.
    CHECK_FALSE(torch::allclose(ours.y, run_linear(true, x, w.flip(0), b).y, 1e-2, 1e-2));
  }
  // An input without gradient (observations) needs no input gradient; a non-contiguous input works.
  const auto w = torch::randn({40, 256}).requires_grad_(true);
  const auto x = torch::randn({256, 512}).t();
  CHECK(rlm::nn::onednn_linear_used(512, 256, 40));
  auto y = rlm::nn::linear(x, w);
  y.sum().backward();
  CHECK(torch::allclose(y, torch::linear(x, w), 1e-4, 1e-4));
  CHECK(torch::allclose(w.grad(), torch::ones({512, 40}).t().mm(x), 1e-4, 1e-4));
  // Small products stay on torch::linear (oneDNN's per-call cost would exceed its gain).
  CHECK_FALSE(rlm::nn::onednn_linear_used(8, 32, 96));
}

TEST_CASE("oneDNN linear: with bf16 operands, the products of the rounded operands in float32", "[memory][linear]") {
  if (!at::hasMKLDNN()) {
    WARN("libtorch without oneDNN: nothing to compare");
    return;
  }
  if (no_bf16_products_here()) return;
  CHECK_FALSE(rlm::nn::onednn_bf16());  // experiment.cpu_matmul's default is fp32
  torch::manual_seed(7);
  const auto x = torch::randn({512, 256}), w = torch::randn({384, 256}), b = torch::randn({384});
  REQUIRE(rlm::nn::onednn_linear_used(512, 256, 384));
  const auto fp32 = run_linear(true, x, w, b);
  rlm::nn::set_onednn_bf16(true);
  const auto bf16 = run_linear(true, x, w, b);
  rlm::nn::set_onednn_bf16(false);
  const auto rounded = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); };
  // What it computes: each product's operands rounded to bf16, accumulated in float32 (the forward's float32 bias
  // included) and the result rounded to bf16, as autocast's products are. The tolerance is one bf16 step (2^-7
  // relative): the float32 sums differ in order, which can move a result across a rounding boundary.
  const auto g = torch::linspace(-1, 1, 512 * 384).view({512, 384});
  CHECK(bf16.y.scalar_type() == torch::kFloat);
  CHECK(torch::allclose(bf16.y, rounded(torch::linear(rounded(x), rounded(w), b)), 8e-3, 1e-3));
  CHECK(torch::allclose(bf16.gx, rounded(rounded(g).mm(rounded(w))), 8e-3, 1e-3));
  CHECK(torch::allclose(bf16.gw, rounded(rounded(g).t().mm(rounded(x))), 8e-3, 1e-3));
  CHECK(torch::equal(bf16.gb, fp32.gb));  // a sum of Δy, no product
  // And so within bf16's rounding of the float32 results, but not equal to them.
  for (const auto& [ours, reference] : {std::pair{bf16.y, fp32.y}, {bf16.gx, fp32.gx}, {bf16.gw, fp32.gw}}) {
    const double relative = ((ours - reference).norm() / reference.norm()).item<double>();
    CHECK(relative < 1e-2);
    CHECK(relative > 1e-5);
  }
}

TEST_CASE("oneDNN linear: the GRU step loop equals torch's fused GRU, resets included", "[memory][linear][simd]") {
  // The step loop runs on the CPU in float32, its per-step product on oneDNN where that is large enough and on
  // torch's GEMM below; the reference is the same weights in float64, where Gru calls torch's fused GRU.
  torch::manual_seed(5);
  for (const auto& [batch, hidden] : {std::pair<int64_t, int64_t>{64, 96}, {16, 32}}) {
    INFO("batch " << batch << ", hidden " << hidden);
    rlm::memory::Gru gru(12, hidden), reference(12, hidden);
    reference.to(torch::kFloat64);
    {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < gru.parameters().size(); ++i) reference.parameters()[i].copy_(gru.parameters()[i]);
    }
    const int64_t steps = 9;
    const auto x = torch::randn({steps, batch, 12});
    auto starts = torch::zeros({steps, batch}, torch::kBool);
    starts[0].fill_(true);
    starts[4][1] = true;  // an episode starts mid-sequence for entry 1
    starts[7][3] = true;
    const auto h0 = torch::randn({batch, hidden});
    const auto run = [&](rlm::memory::Gru& model, torch::ScalarType dtype) {
      model.zero_grad();
      const auto h =
          h0.to(dtype).requires_grad_(true);  // gradients reach the initial state and flow from the final one
      auto out = model.forward(x.to(dtype), {{h}}, starts);
      const auto weights = torch::linspace(-1, 1, out.y.numel(), dtype).view(out.y.sizes());
      ((out.y * weights).sum() + 0.5 * out.state.tensors[0].sum()).backward();
      std::vector<torch::Tensor> result = {out.y.detach(), out.state.tensors[0].detach(), h.grad()};
      for (const auto& p : model.parameters()) result.push_back(p.grad().clone());
      return result;
    };
    const auto ref = run(reference, torch::kFloat64);
    for (const bool onednn : {true, false}) {
      INFO("oneDNN " << onednn << " (used: " << rlm::nn::onednn_linear_used(batch, hidden, 3 * hidden) << ")");
      const auto ours = with_onednn(onednn, [&] { return run(gru, torch::kFloat32); });
      REQUIRE(ours.size() == ref.size());
      for (size_t i = 0; i < ours.size(); ++i) {
        INFO("tensor " << i);
        // Relative to the tensor's scale: a weight gradient sums T·B float32 products (≈1e-6 of its largest
        // entries); a wrong formula is off by the scale itself.
        const double diff = (ours[i].to(torch::kFloat64) - ref[i]).abs().max().item<double>();
        const double scale = ref[i].abs().max().item<double>();
        INFO("max difference " << diff << " at scale " << scale);
        CHECK(diff <= 1e-5 * scale + 1e-6);
      }
    }
  }
}

TEST_CASE("oneDNN linear: bf16 products follow in-place changes of a weight", "[memory][linear]") {
  // The bf16 path keeps each weight's rounded copy while the weight is unchanged; an optimiser step, a
  // checkpoint load or any in-place write must be seen by the next product, in the forward and in the backward.
  if (!at::hasMKLDNN()) {
    WARN("libtorch without oneDNN: nothing to compare");
    return;
  }
  if (no_bf16_products_here()) return;
  torch::manual_seed(11);
  const auto x = torch::randn({256, 128}), delta = torch::randn({192, 128});
  auto w = torch::randn({192, 128}).requires_grad_(true);
  REQUIRE(rlm::nn::onednn_linear_used(256, 128, 192));
  const auto rounded = [](const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); };
  const auto expected_y = [&] { return rounded(torch::linear(rounded(x), rounded(w.detach()))); };
  const auto expected_gx = [&] { return rounded(torch::ones({256, 192}).mm(rounded(w.detach()))); };
  rlm::nn::set_onednn_bf16(true);
  std::vector<std::pair<torch::Tensor, torch::Tensor>> seen;  // (y, Δx) before and after each change
  for (int change = 0; change < 3; ++change) {
    const auto xg = x.clone().requires_grad_(true);
    const auto y = rlm::nn::linear(xg, w);
    y.sum().backward();
    seen.emplace_back(y.detach(), xg.grad());
    CHECK(torch::allclose(y, expected_y(), 8e-3, 1e-3));
    CHECK(torch::allclose(xg.grad(), expected_gx(), 8e-3, 1e-3));
    torch::NoGradGuard no_grad;
    if (change == 0) w.add_(delta);                      // as the optimiser's step
    if (change == 1) w.copy_(torch::randn({192, 128}));  // as a checkpoint's load
  }
  rlm::nn::set_onednn_bf16(false);
  CHECK_FALSE(torch::allclose(seen[0].first, seen[1].first, 1e-2, 1e-2));
  CHECK_FALSE(torch::allclose(seen[1].second, seen[2].second, 1e-2, 1e-2));
}

TEST_CASE("oneDNN linear: the GRU step loop with bf16 products stays within bf16's rounding of float32",
          "[memory][linear]") {
  // The step loop's W_hh enters one product per step each way, through the bf16 weight cache (W_hh and its
  // transposed view); after an optimiser-like change of W_hh both passes must use the new weight.
  if (!at::hasMKLDNN()) {
    WARN("libtorch without oneDNN: nothing to compare");
    return;
  }
  if (no_bf16_products_here()) return;
  torch::manual_seed(13);
  rlm::memory::Gru gru(12, 96);
  const int64_t steps = 7, batch = 64;
  REQUIRE(rlm::nn::onednn_linear_used(batch, 96, 3 * 96));
  const auto x = torch::randn({steps, batch, 12});
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[0].fill_(true);
  starts[3][5] = true;
  const auto run = [&](bool bf16) {
    rlm::nn::set_onednn_bf16(bf16);
    gru.zero_grad();
    auto out = gru.forward(x, gru.initial_state(batch, torch::kCPU), starts);
    (out.y * torch::linspace(-1, 1, out.y.numel()).view(out.y.sizes())).sum().backward();
    rlm::nn::set_onednn_bf16(false);
    std::vector<torch::Tensor> result = {out.y.detach()};
    for (const auto& p : gru.parameters()) result.push_back(p.grad().clone());
    return result;
  };
  const auto relative = [](const torch::Tensor& a, const torch::Tensor& b) {
    return ((a - b).norm() / b.norm()).item<double>();
  };
  for (int change = 0; change < 2; ++change) {
    INFO("after " << change << " change(s) of W_hh");
    const auto ours = run(true), reference = run(false);
    for (size_t i = 0; i < ours.size(); ++i) {
      INFO("tensor " << i);
      CHECK(relative(ours[i], reference[i]) < 2e-2);
      CHECK(relative(ours[i], reference[i]) > 1e-6);  // bf16 products, not float32's
    }
    torch::NoGradGuard no_grad;
    gru.named_parameters()["gru.weight_hh_l0"].mul_(-1.5);  // a stale bf16 copy would be far off now
  }
}
