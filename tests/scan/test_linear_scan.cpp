// linear_scan against the naive float64 loop: forward, gradients (autograd of the loop, and central finite
// differences), resets mid-sequence, T = 1 and T = 4096, broadcast and non-contiguous inputs, complex gates.
// The CUDA cases run only where a GPU is present (scripts/gpu_check.sh); elsewhere they are skipped with a message.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <limits>

#include "scan/linear_scan.hpp"

using rlm::scan::linear_scan;
using rlm::scan::linear_scan_reference;

namespace {

struct Problem {
  torch::Tensor a, b, h0, starts;
};

// Gates inside the unit disc (|a| < 1), so long sequences stay finite; about 5% of (t, b) start an episode.
Problem make_problem(int64_t steps, int64_t batch, int64_t channels, torch::ScalarType type, uint64_t seed,
                     const torch::Device& device = torch::kCPU) {
  torch::manual_seed(seed);
  auto real = torch::TensorOptions().dtype(torch::kFloat64);
  Problem p;
  if (c10::isComplexType(type)) {
    auto radius = torch::rand({steps, batch, channels}, real) * 0.98;
    auto angle = torch::rand({steps, batch, channels}, real) * 6.283;
    p.a = torch::polar(radius, angle).to(type);
    p.b = torch::complex(torch::randn({steps, batch, channels}, real), torch::randn({steps, batch, channels}, real))
              .to(type);
    p.h0 = torch::complex(torch::randn({batch, channels}, real), torch::randn({batch, channels}, real)).to(type);
  } else {
    p.a = (torch::rand({steps, batch, channels}, real) * 1.96 - 0.98).to(type);
    p.b = torch::randn({steps, batch, channels}, real).to(type);
    p.h0 = torch::randn({batch, channels}, real).to(type);
  }
  p.starts = torch::rand({steps, batch}) < 0.05;
  p.a = p.a.to(device);
  p.b = p.b.to(device);
  p.h0 = p.h0.to(device);
  p.starts = p.starts.to(device);
  return p;
}

// Gradients of sum(w ⊙ h) (w random, so every output matters differently) with respect to a, b, h0.
std::vector<torch::Tensor> grads_of(bool use_reference, const Problem& p, const torch::Tensor& weights) {
  auto a = p.a.detach().clone().requires_grad_(true);
  auto b = p.b.detach().clone().requires_grad_(true);
  auto h0 = p.h0.detach().clone().requires_grad_(true);
  auto h = use_reference ? linear_scan_reference(a, b, h0, p.starts) : linear_scan(a, b, h0, p.starts);
  auto loss = torch::real(h * weights).sum();
  loss.backward();
  return {a.grad(), b.grad(), h0.grad()};
}

void check_close(const torch::Tensor& got, const torch::Tensor& want, double tol) {
  REQUIRE(got.sizes() == want.sizes());
  const double err = (got.to(want.dtype()) - want).abs().max().item<double>();
  const double scale = std::max(1.0, want.abs().max().item<double>());
  INFO("max abs error " << err << " (scale " << scale << ")");
  CHECK(err <= tol * scale);
}

// Plain float64 loops (no torch ops): h and the gradients of sum(w ⊙ h) for real inputs, as the oracle for long
// sequences where autograd through linear_scan_reference would be slow.
struct NaiveResult {
  torch::Tensor h, grad_a, grad_b, grad_h0;
};
NaiveResult naive_float64(const torch::Tensor& a_in, const torch::Tensor& b_in, const torch::Tensor& h0_in,
                          const torch::Tensor& starts_in, const torch::Tensor& w_in) {
  const auto a = a_in.contiguous().to(torch::kFloat64), b = b_in.contiguous().to(torch::kFloat64);
  const auto h0 = h0_in.contiguous().to(torch::kFloat64), w = w_in.contiguous().to(torch::kFloat64);
  const auto starts = starts_in.contiguous();
  const int64_t steps = b.size(0), batch = b.size(1), channels = b.size(2);
  NaiveResult r{torch::zeros_like(b), torch::zeros_like(b), torch::zeros_like(b), torch::zeros_like(h0)};
  auto A = a.accessor<double, 3>(), B = b.accessor<double, 3>(), W = w.accessor<double, 3>();
  auto H0 = h0.accessor<double, 2>();
  auto S = starts.accessor<bool, 2>();
  auto H = r.h.accessor<double, 3>(), GA = r.grad_a.accessor<double, 3>(), GB = r.grad_b.accessor<double, 3>();
  auto GH0 = r.grad_h0.accessor<double, 2>();
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t c = 0; c < channels; ++c) {
      double h = H0[i][c];
      for (int64_t t = 0; t < steps; ++t) {
        h = (S[t][i] ? 0.0 : A[t][i][c] * h) + B[t][i][c];
        H[t][i][c] = h;
      }
      double g = 0;
      for (int64_t t = steps - 1; t >= 0; --t) {
        const bool next_resets = t + 1 < steps && S[t + 1][i];
        g = W[t][i][c] + (t + 1 < steps && !next_resets ? A[t + 1][i][c] * g : 0.0);
        GB[t][i][c] = g;
        GA[t][i][c] = S[t][i] ? 0.0 : (t == 0 ? H0[i][c] : H[t - 1][i][c]) * g;
      }
      GH0[i][c] = S[0][i] ? 0.0 : A[0][i][c] * GB[0][i][c];
    }
  return r;
}

bool have_cuda() { return torch::cuda::is_available(); }

}  // namespace

TEST_CASE("linear_scan equals the sequential loop, real and complex, with resets", "[scan]") {
  for (auto type : {torch::kFloat64, torch::kFloat32, torch::kComplexFloat, torch::kComplexDouble}) {
    for (int64_t steps : {1, 2, 31, 33, 100}) {
      const auto p = make_problem(steps, 5, 300, type, 10 + steps);  // 300 channels: two channel blocks
      const auto want =
          linear_scan_reference(p.a.to(c10::isComplexType(type) ? torch::kComplexDouble : torch::kFloat64),
                                p.b.to(c10::isComplexType(type) ? torch::kComplexDouble : torch::kFloat64),
                                p.h0.to(c10::isComplexType(type) ? torch::kComplexDouble : torch::kFloat64), p.starts);
      const bool single = type == torch::kFloat32 || type == torch::kComplexFloat;
      INFO("dtype " << type << " T = " << steps);
      check_close(linear_scan(p.a, p.b, p.h0, p.starts), want, single ? 1e-5 : 1e-12);
    }
  }
}

TEST_CASE("linear_scan gradients equal autograd through the loop, with resets", "[scan]") {
  for (auto type : {torch::kFloat64, torch::kComplexDouble}) {
    for (int64_t steps : {1, 7, 64}) {
      const auto p = make_problem(steps, 3, 20, type, 100 + steps);
      const auto weights = torch::randn(p.b.sizes(), torch::kFloat64).to(type);
      const auto got = grads_of(false, p, weights), want = grads_of(true, p, weights);
      INFO("dtype " << type << " T = " << steps);
      for (int i = 0; i < 3; ++i) check_close(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 1e-12);
    }
  }
}

TEST_CASE("linear_scan gradients match central finite differences in float64", "[scan]") {
  auto p = make_problem(6, 2, 3, torch::kFloat64, 7);
  p.starts[3][1] = true;
  const auto weights = torch::randn(p.b.sizes(), torch::kFloat64);
  const auto analytic = grads_of(false, p, weights);
  const auto loss = [&](const Problem& q) {
    return (linear_scan(q.a, q.b, q.h0, q.starts) * weights).sum().item<double>();
  };
  const double eps = 1e-6;
  for (int which = 0; which < 3; ++which) {
    torch::Tensor& x = which == 0 ? p.a : which == 1 ? p.b : p.h0;
    auto flat = x.view({-1});
    auto numeric = torch::zeros_like(flat);
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double saved = flat[i].item<double>();
      flat[i] = saved + eps;
      const double up = loss(p);
      flat[i] = saved - eps;
      const double down = loss(p);
      flat[i] = saved;
      numeric[i] = (up - down) / (2 * eps);
    }
    INFO("input " << which);
    check_close(analytic[static_cast<size_t>(which)].reshape({-1}), numeric, 1e-7);
  }
}

TEST_CASE("linear_scan: a reset drops the carried state exactly", "[scan]") {
  const auto p = make_problem(12, 2, 4, torch::kFloat64, 3);
  auto starts = torch::zeros({12, 2}, torch::kBool);
  starts[5][0] = true;
  const auto h = linear_scan(p.a, p.b, p.h0, starts);
  // From t = 5 on, entry 0 equals a fresh scan of the tail from a zero state.
  const auto fresh =
      linear_scan(p.a.slice(0, 5), p.b.slice(0, 5), torch::zeros_like(p.h0), torch::zeros({7, 2}, torch::kBool));
  check_close(h.slice(0, 5).select(1, 0), fresh.select(1, 0), 1e-14);
  // Entry 1 did not reset, so it differs from the fresh scan (the comparison above can fail).
  CHECK((h.slice(0, 5).select(1, 1) - fresh.select(1, 1)).abs().max().item<double>() > 1e-6);
}

TEST_CASE("linear_scan: T = 4096, broadcast gate and non-contiguous inputs", "[scan]") {
  const int64_t steps = 4096, batch = 3, channels = 40;
  torch::manual_seed(5);
  // A per-channel decay broadcast over time and batch (FFM's use), read in place through stride-0 views.
  auto gamma = (torch::rand({channels}, torch::kFloat64) * 0.2 + 0.79).requires_grad_(true);
  auto a = gamma.expand({steps, batch, channels});
  // b as a transposed view: [B, T, C] storage seen as [T, B, C].
  auto b_storage = torch::randn({batch, steps, channels}, torch::kFloat64).requires_grad_(true);
  auto b = b_storage.transpose(0, 1);
  REQUIRE_FALSE(b.is_contiguous());
  auto h0 = torch::randn({batch, channels}, torch::kFloat64);
  auto starts = torch::rand({steps, batch}) < 0.01;

  const auto h = linear_scan(a, b, h0, starts);
  const auto weights = torch::randn({steps, batch, channels}, torch::kFloat64);
  const auto want = naive_float64(a, b, h0, starts, weights);
  check_close(h, want.h, 1e-12);

  // Gradients: the broadcast gate's is summed over (t, b) by autograd; b's lands in its transposed storage.
  (h * weights).sum().backward();
  check_close(gamma.grad(), want.grad_a.sum(std::vector<int64_t>{0, 1}), 1e-10);
  check_close(b_storage.grad(), want.grad_b.transpose(0, 1), 1e-12);
}

TEST_CASE("linear_scan: float32 over T = 4096 stays close to the float64 loop", "[scan]") {
  const auto p = make_problem(4096, 2, 300, torch::kFloat32, 9);
  const auto weights = torch::randn(p.b.sizes(), torch::kFloat64);
  const auto want = naive_float64(p.a, p.b, p.h0, p.starts, weights);
  auto a = p.a.clone().requires_grad_(true), b = p.b.clone().requires_grad_(true);
  auto h0 = p.h0.clone().requires_grad_(true);
  const auto h = linear_scan(a, b, h0, p.starts);
  check_close(h, want.h, 1e-5);
  (h * weights.to(torch::kFloat32)).sum().backward();
  check_close(a.grad(), want.grad_a, 1e-4);
  check_close(b.grad(), want.grad_b, 1e-5);
  check_close(h0.grad(), want.grad_h0, 1e-5);
}

TEST_CASE("linear_scan without starts equals all-false starts, forward and backward", "[scan]") {
  const auto p = make_problem(9, 2, 5, torch::kFloat64, 4);
  auto a1 = p.a.clone().requires_grad_(true), a2 = p.a.clone().requires_grad_(true);
  const auto none = linear_scan(a1, p.b, p.h0);
  const auto zeros = linear_scan(a2, p.b, p.h0, torch::zeros({9, 2}, torch::kBool));
  CHECK(torch::equal(none, zeros));
  none.sum().backward();
  zeros.sum().backward();
  CHECK(torch::equal(a1.grad(), a2.grad()));
}

TEST_CASE("linear_scan reads lazy conjugate views as their values, forward and backward", "[scan]") {
  // x.conj() of a complex tensor only sets a flag; the kernels read raw memory, so the op must resolve it. The same
  // for the gradient when h is used through h.conj().
  const auto p = make_problem(9, 2, 5, torch::kComplexDouble, 31);
  const auto weights = torch::randn(p.b.sizes(), torch::kComplexDouble);
  auto run = [&](bool lazy) {
    auto a = p.a.detach().clone().requires_grad_(true);
    auto b = p.b.detach().clone().requires_grad_(true);
    auto h0 = p.h0.detach().clone().requires_grad_(true);
    const auto a_in = lazy ? a.conj() : a.conj().resolve_conj();
    auto h = linear_scan(a_in, b, h0, p.starts);
    const auto out = lazy ? h.conj() : h.conj().resolve_conj();
    torch::real(out * weights).sum().backward();
    return std::vector<torch::Tensor>{out.detach().resolve_conj(), a.grad(), b.grad(), h0.grad()};
  };
  REQUIRE(p.a.conj().is_conj());
  const auto lazy = run(true), materialised = run(false);
  for (size_t i = 0; i < lazy.size(); ++i) check_close(lazy[i], materialised[i], 1e-12);
}

TEST_CASE("linear_scan: bad inputs give clear errors", "[scan]") {
  const auto p = make_problem(4, 2, 3, torch::kFloat32, 1);
  CHECK_THROWS_WITH(linear_scan(p.a, p.b.slice(0, 1), p.h0), Catch::Contains("differ in shape"));
  CHECK_THROWS_WITH(linear_scan(p.a, p.b, p.h0.slice(1, 0, 2)), Catch::Contains("h0 must be [B, C]"));
  CHECK_THROWS_WITH(linear_scan(p.a.to(torch::kFloat64), p.b, p.h0), Catch::Contains("one dtype"));
  CHECK_THROWS_WITH(linear_scan(p.a, p.b, p.h0, p.starts.slice(0, 1)), Catch::Contains("starts must be [T, B]"));
  CHECK_THROWS_WITH(linear_scan(p.a.to(torch::kInt32), p.b.to(torch::kInt32), p.h0.to(torch::kInt32)),
                    Catch::Contains("dtype must be"));
}

TEST_CASE("linear_scan on CUDA: no starts, broadcast gate, and an inf state that a reset must drop", "[scan][cuda]") {
  if (!have_cuda()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  const torch::Device gpu(torch::kCUDA);
  for (int64_t steps : {5, 300}) {  // the sequential kernel, and the chunked one (few channels, T >= 256)
    INFO("T = " << steps);
    auto p = make_problem(steps, 3, 7, torch::kFloat32, 77 + steps);
    // No starts, and a gate broadcast over time and batch (a stride-0 expand, as FFM and the spiking cell pass it).
    const auto gate = (torch::rand({1, 1, 7}) * 0.9).expand({steps, 3, 7});
    const auto want = linear_scan(gate, p.b, p.h0);
    check_close(linear_scan(gate.to(gpu), p.b.to(gpu), p.h0.to(gpu)).cpu(), want, 2e-5);
    // An episode whose state overflows to inf, then a reset: the next episode must be finite, as on the CPU.
    auto b = p.b.clone();
    b[1][0].fill_(std::numeric_limits<float>::infinity());
    auto starts = torch::zeros({steps, 3}, torch::kBool);
    starts[3][0] = true;
    const auto cpu = linear_scan(p.a, b, p.h0, starts);
    const auto cuda = linear_scan(p.a.to(gpu), b.to(gpu), p.h0.to(gpu), starts.to(gpu)).cpu();
    REQUIRE(torch::isfinite(cpu.slice(0, 3).select(1, 0)).all().item<bool>());
    CHECK(torch::isfinite(cuda.slice(0, 3).select(1, 0)).all().item<bool>());
    check_close(cuda.slice(0, 3), cpu.slice(0, 3), 2e-5);
  }
}

TEST_CASE("linear_scan on CUDA equals the CPU scan, forward and backward", "[scan][cuda]") {
  if (!have_cuda()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  const torch::Device gpu(torch::kCUDA);
  for (auto type : {torch::kFloat32, torch::kFloat64, torch::kComplexFloat, torch::kComplexDouble}) {
    for (int64_t steps : {1, 2, 31, 33, 100, 1024, 1025, 4096}) {
      for (int64_t channels : {1, 3, 64, 1000}) {
        const auto p = make_problem(steps, 4, channels, type, 1000 + steps + channels);
        const bool single = type != torch::kFloat64;
        INFO("dtype " << type << " T = " << steps << " C = " << channels);
        const auto want = linear_scan(p.a, p.b, p.h0, p.starts);
        const auto got = linear_scan(p.a.to(gpu), p.b.to(gpu), p.h0.to(gpu), p.starts.to(gpu)).cpu();
        check_close(got, want, single ? 2e-5 : 1e-12);
        const auto weights = torch::randn(p.b.sizes(), torch::kFloat64).to(type);
        const auto cpu_grads = grads_of(false, p, weights);
        Problem q{p.a.to(gpu), p.b.to(gpu), p.h0.to(gpu), p.starts.to(gpu)};
        const auto gpu_grads = grads_of(false, q, weights.to(gpu));
        for (int i = 0; i < 3; ++i)
          check_close(gpu_grads[static_cast<size_t>(i)].cpu(), cpu_grads[static_cast<size_t>(i)],
                      single ? 2e-5 : 1e-12);
      }
    }
  }
}
