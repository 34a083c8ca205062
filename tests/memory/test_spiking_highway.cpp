// The spiking cell's fused highway op (CPU, and its CUDA kernels on a GPU) against the same computation in whole-tensor
// ops and linear_scan: forward and every gradient in float64, with resets, a broadcast forget gate (the LRU option),
// losses that use ŷ, h or both, and more channels than one work block.
#include <torch/torch.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "memory/spiking_highway.hpp"
#include "scan/fused_ops_device.hpp"

using rlm::memory::spiking_highway;
using rlm::memory::spiking_highway_reference;

namespace {

struct Case {
  std::vector<torch::Tensor> inputs;  // wx_re, wx_im, c_re, c_im, s_in, s_out, h0 (leaves)
  torch::Tensor starts;
};

Case make_case(int64_t steps, int64_t batch, int64_t n, bool broadcast_c, uint64_t seed) {
  torch::manual_seed(seed);
  const auto f = torch::TensorOptions().dtype(torch::kFloat64);
  Case c;
  c.inputs.push_back(torch::randn({steps, batch, n}, f));
  c.inputs.push_back(torch::randn({steps, batch, n}, f));
  const std::vector<int64_t> c_shape = broadcast_c ? std::vector<int64_t>{n} : std::vector<int64_t>{steps, batch, n};
  c.inputs.push_back(torch::rand(c_shape, f) * 1.2 - 0.6);
  c.inputs.push_back(torch::rand(c_shape, f) * 1.2 - 0.6);
  // Gates in (0, 1) rather than {0, 1}, so that every gradient term is exercised (the op does not assume binary s).
  c.inputs.push_back(torch::rand({steps, batch, n}, f));
  c.inputs.push_back(torch::rand({steps, batch, n}, f));
  c.inputs.push_back(torch::randn({batch, n, 2}, f));
  c.starts = torch::rand({steps, batch}) < 0.15;
  if (steps > 0 && batch > 1) c.starts[0][1] = true;
  return c;
}

// Outputs and gradients for loss = Σ w_y ŷ + Σ w_h h (either weight may be switched off).
// On `device`; the results come back to the CPU.
std::vector<torch::Tensor> run(bool fused, const Case& c, bool use_y, bool use_h,
                               const torch::Device& device = torch::kCPU) {
  std::vector<torch::Tensor> leaves;
  for (const auto& t : c.inputs) leaves.push_back(t.detach().to(device).clone().requires_grad_(true));
  const auto shape = leaves[4].sizes();
  const auto out = (fused ? spiking_highway : spiking_highway_reference)(leaves[0], leaves[1], leaves[2].expand(shape),
                                                                         leaves[3].expand(shape), leaves[4], leaves[5],
                                                                         leaves[6], c.starts.to(device));
  torch::manual_seed(99);
  // Drawn on the CPU: the same weights whatever the device.
  const auto wy = torch::randn(out.y_hat.sizes(), torch::kFloat64).to(out.y_hat.options());
  const auto wh = torch::randn(out.hidden.sizes(), torch::kFloat64).to(out.hidden.options());
  auto loss = torch::zeros({}, out.y_hat.options());
  if (use_y) loss = loss + (out.y_hat * wy).sum();
  if (use_h) loss = loss + (out.hidden * wh).sum();
  loss.backward();
  std::vector<torch::Tensor> result = {out.y_hat.detach().cpu(), out.hidden.detach().cpu()};
  for (const auto& t : leaves) result.push_back(t.grad().defined() ? t.grad().cpu() : torch::zeros_like(t).cpu());
  return result;
}

void check_same(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want) {
  const char* names[] = {"y_hat", "hidden", "d_wx_re", "d_wx_im", "d_c_re", "d_c_im", "d_s_in", "d_s_out", "d_h0"};
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(names[i]);
    REQUIRE(got[i].sizes() == want[i].sizes());
    const double err = (got[i] - want[i]).abs().max().item<double>();
    INFO("max abs error " << err);
    CHECK(err <= 1e-11 * std::max(1.0, want[i].abs().max().item<double>()));
  }
}

}  // namespace

TEST_CASE("spiking_highway equals the whole-tensor highways, forward and every gradient", "[memory][spiking]") {
  for (int64_t steps : {1, 2, 17}) {
    for (int64_t n : {3, 300}) {  // 300 channels: two work blocks of 256
      for (bool broadcast_c : {false, true}) {
        INFO("T = " << steps << " N = " << n << " broadcast c " << broadcast_c);
        const auto c = make_case(steps, 3, n, broadcast_c, 10 * steps + n);
        check_same(run(true, c, true, true), run(false, c, true, true));
      }
    }
  }
  const auto c = make_case(9, 2, 5, false, 4);
  SECTION("a loss of ŷ alone") { check_same(run(true, c, true, false), run(false, c, true, false)); }
  SECTION("a loss of h alone") { check_same(run(true, c, false, true), run(false, c, false, true)); }
}

TEST_CASE("spiking_highway on a GPU equals the whole-tensor highways, forward and every gradient",
          "[memory][spiking][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  // The fused op's CUDA kernels (spiking_highway_cuda.cu) against the whole-tensor form on the CPU, in float64.
  REQUIRE(rlm::scan::fused_ops_run_on(torch::kCUDA));
  for (int64_t steps : {1, 17}) {
    for (int64_t n : {3, 300}) {  // 300 channels: more than one block of threads
      for (bool broadcast_c : {false, true}) {
        INFO("T = " << steps << " N = " << n << " broadcast c " << broadcast_c);
        const auto c = make_case(steps, 3, n, broadcast_c, 10 * steps + n);
        for (const auto& [use_y, use_h] : {std::pair{true, false}, {false, true}, {true, true}}) {
          INFO("loss on y " << use_y << ", on h " << use_h);
          check_same(run(true, c, use_y, use_h, torch::kCUDA), run(false, c, use_y, use_h));
        }
      }
    }
  }
}

TEST_CASE("spiking_highway float32 stays close to float64 and rejects bad inputs", "[memory][spiking]") {
  const auto c = make_case(40, 2, 7, false, 5);
  const auto shape = c.inputs[4].sizes();
  auto call = [&](torch::ScalarType type) {
    std::vector<torch::Tensor> in;
    for (const auto& t : c.inputs) in.push_back(t.to(type));
    return spiking_highway(in[0], in[1], in[2].expand(shape), in[3].expand(shape), in[4], in[5], in[6], c.starts);
  };
  const auto single = call(torch::kFloat32), dbl = call(torch::kFloat64);
  CHECK((single.y_hat.to(torch::kFloat64) - dbl.y_hat).abs().max().item<double>() < 1e-4);
  const auto& in = c.inputs;
  CHECK_THROWS_WITH(spiking_highway(in[0], in[1], in[2], in[3], in[4].slice(0, 1), in[5], in[6], c.starts),
                    Catch::Contains("must have the shape"));
  CHECK_THROWS_WITH(spiking_highway(in[0], in[1], in[2], in[3], in[4], in[5], in[6].slice(1, 1), c.starts),
                    Catch::Contains("h0 must be [B, N, 2]"));
  CHECK_THROWS_WITH(spiking_highway(in[0], in[1], in[2], in[3], in[4], in[5], in[6], c.starts.slice(0, 1)),
                    Catch::Contains("starts must be bool [T, B]"));
}
