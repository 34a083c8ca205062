// The fused SHM op against the materialised reference loop: forward, final state, every gradient (float64), resets
// mid-sequence, the ±clamp of pomdp-baselines, sequences longer than one checkpoint chunk.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "scan/shm_scan.hpp"

using rlm::scan::shm_scan;
using rlm::scan::shm_scan_reference;

namespace {

struct ShmProblem {
  std::vector<torch::Tensor> inputs;  // theta, vc, eta, v, k, q, m0
  torch::Tensor starts;
};

ShmProblem make_problem(int64_t steps, int64_t batch, int64_t size, uint64_t seed, double scale = 1.0,
                        const torch::Device& device = torch::kCPU) {
  torch::manual_seed(seed);
  auto f = torch::TensorOptions().dtype(torch::kFloat64);
  ShmProblem p;
  p.inputs = {torch::randn({steps, batch, size}, f),
              torch::randn({steps, batch, size}, f),
              torch::rand({steps, batch}, f),
              torch::randn({steps, batch, size}, f) * scale,
              torch::rand({steps, batch, size}, f) / size,
              torch::rand({steps, batch, size}, f) / size,
              torch::randn({batch, size, size}, f) * scale};
  p.starts = torch::rand({steps, batch}) < 0.1;
  for (auto& t : p.inputs) t = t.to(device);
  p.starts = p.starts.to(device);
  return p;
}

// Outputs and gradients of a weighted sum of y and the final state.
std::vector<torch::Tensor> run(bool reference, const ShmProblem& p, double clamp, uint64_t weight_seed) {
  std::vector<torch::Tensor> in;
  for (const auto& t : p.inputs) in.push_back(t.detach().clone().requires_grad_(true));
  const auto out =
      (reference ? shm_scan_reference : shm_scan)(in[0], in[1], in[2], in[3], in[4], in[5], in[6], p.starts, clamp);
  // Drawn on the CPU and moved: CUDA's generator gives other numbers for the same seed, and the CPU-vs-CUDA test
  // needs the same loss on both devices.
  torch::manual_seed(weight_seed);
  const auto wy = torch::randn(out.y.sizes(), torch::kFloat64).to(out.y.device());
  const auto wm = torch::randn(out.m_last.sizes(), torch::kFloat64).to(out.m_last.device());
  ((out.y * wy).sum() + (out.m_last * wm).sum()).backward();
  std::vector<torch::Tensor> result = {out.y.detach(), out.m_last.detach()};
  for (const auto& t : in) result.push_back(t.grad());
  return result;
}

void check_all_close(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want, double tol) {
  const char* names[] = {"y", "m_last", "d_theta", "d_vc", "d_eta", "d_v", "d_k", "d_q", "d_m0"};
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(names[i]);
    REQUIRE(got[i].sizes() == want[i].sizes());
    const double err = (got[i].cpu() - want[i].cpu()).abs().max().item<double>();
    const double scale = std::max(1.0, want[i].abs().max().item<double>());
    INFO("max abs error " << err << " scale " << scale);
    CHECK(err <= tol * scale);
  }
}

}  // namespace

TEST_CASE("shm_scan equals the materialised loop, forward and every gradient", "[scan][shm][simd]") {
  // T around the CPU op's 32-step chunks; H below, at and past its 8 partial sums per row reduction.
  for (int64_t size : {6, 13, 24}) {
    for (int64_t steps : {1, 5, 31, 32, 33, 70}) {
      INFO("H = " << size << " T = " << steps);
      const auto p = make_problem(steps, 3, size, 20 + steps);
      check_all_close(run(false, p, 0.0, 1), run(true, p, 0.0, 1), 1e-10);
    }
  }
}

TEST_CASE("shm_scan with the state clamp equals the clamped loop", "[scan][shm][simd]") {
  // Large values so that the ±1.5 clamp is active on a good share of the elements.
  const auto p = make_problem(40, 2, 13, 3, /*scale=*/3.0);
  const auto got = run(false, p, 1.5, 2), want = run(true, p, 1.5, 2);
  check_all_close(got, want, 1e-10);
  // The clamp did act (otherwise this test would not test it).
  const auto unclamped = run(true, p, 0.0, 2);
  CHECK((unclamped[0] - want[0]).abs().max().item<double>() > 1e-3);
}

TEST_CASE("shm_scan: a reset equals a fresh zero state", "[scan][shm][simd]") {
  auto p = make_problem(20, 2, 4, 9);
  p.starts.zero_();
  p.starts[8][1] = true;
  const auto whole = run(false, p, 0.0, 1);
  ShmProblem tail;
  for (size_t i = 0; i < 6; ++i) tail.inputs.push_back(p.inputs[i].slice(0, 8));
  tail.inputs.push_back(torch::zeros_like(p.inputs[6]));
  tail.starts = torch::zeros({12, 2}, torch::kBool);
  const auto fresh = run(false, tail, 0.0, 1);
  CHECK(torch::allclose(whole[0].slice(0, 8).select(1, 1), fresh[0].select(1, 1), 1e-12, 1e-12));
  CHECK_FALSE(torch::allclose(whole[0].slice(0, 8).select(1, 0), fresh[0].select(1, 0), 1e-6, 1e-6));
}

TEST_CASE("shm_scan without starts equals all-false starts", "[scan][shm]") {
  auto p = make_problem(12, 2, 4, 8);
  p.starts.zero_();
  const auto with_flags = run(false, p, 0.0, 1);
  ShmProblem none{p.inputs, torch::Tensor()};
  check_all_close(run(false, none, 0.0, 1), with_flags, 0.0);
}

TEST_CASE("shm_scan with an empty batch or memory returns empty outputs", "[scan][shm]") {
  for (auto [batch, size] : {std::pair<int64_t, int64_t>{0, 4}, {2, 0}}) {
    const auto p = make_problem(3, batch, size, 1);
    const auto out =
        shm_scan(p.inputs[0], p.inputs[1], p.inputs[2], p.inputs[3], p.inputs[4], p.inputs[5], p.inputs[6], p.starts);
    CHECK(out.y.sizes() == torch::IntArrayRef({3, batch, size}));
    CHECK(out.m_last.sizes() == torch::IntArrayRef({batch, size, size}));
  }
}

TEST_CASE("shm_scan float32 stays close to float64", "[scan][shm][simd]") {
  const auto p = make_problem(100, 4, 16, 5);
  std::vector<torch::Tensor> in;
  for (const auto& t : p.inputs) in.push_back(t.to(torch::kFloat32));
  const auto single = shm_scan(in[0], in[1], in[2], in[3], in[4], in[5], in[6], p.starts);
  const auto dbl =
      shm_scan(p.inputs[0], p.inputs[1], p.inputs[2], p.inputs[3], p.inputs[4], p.inputs[5], p.inputs[6], p.starts);
  CHECK((single.y.to(torch::kFloat64) - dbl.y).abs().max().item<double>() < 1e-4);
}

TEST_CASE("shm_scan on CUDA equals the CPU op", "[scan][shm][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  // H: one partial tile, one full, several with a partial last tile (40, 100), the POPGym size.
  for (int64_t size : {5, 24, 40, 100, 128}) {
    for (int64_t steps : {1, 17, 100}) {
      INFO("H = " << size << " T = " << steps);
      const auto p = make_problem(steps, 3, size, 40 + size + steps);
      ShmProblem gpu{{}, p.starts.cuda()};
      for (const auto& t : p.inputs) gpu.inputs.push_back(t.cuda());
      check_all_close(run(false, gpu, 0.0, 3), run(false, p, 0.0, 3), 1e-9);
      check_all_close(run(false, gpu, 2.0, 3), run(false, p, 2.0, 3), 1e-9);
    }
  }
  // A loss of y alone: backward gets no gradient for the final state.
  const auto p = make_problem(33, 2, 40, 9);
  auto y_only = [](const ShmProblem& q) {
    std::vector<torch::Tensor> in;
    for (const auto& t : q.inputs) in.push_back(t.detach().clone().requires_grad_(true));
    const auto out = shm_scan(in[0], in[1], in[2], in[3], in[4], in[5], in[6], q.starts);
    out.y.pow(2).sum().backward();
    std::vector<torch::Tensor> grads;
    for (const auto& t : in) grads.push_back(t.grad().cpu());
    return grads;
  };
  ShmProblem gpu{{}, p.starts.cuda()};
  for (const auto& t : p.inputs) gpu.inputs.push_back(t.cuda());
  const auto got = y_only(gpu), want = y_only(p);
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("gradient " << i);
    CHECK((got[i] - want[i]).abs().max().item<double>() <= 1e-9 * std::max(1.0, want[i].abs().max().item<double>()));
  }
  // Deterministic: no atomics, so a second backward gives the same bits (H = 40 spans two tiles).
  const auto again = y_only(gpu);
  for (size_t i = 0; i < got.size(); ++i) CHECK(torch::equal(again[i], got[i]));
}
