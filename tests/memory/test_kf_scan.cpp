// KF layer scan (scan/kf_scan.hpp): the Hillis–Steele scan over Särkkä elements equals the sequential KF equations
// (KF paper Eqs. 4–6), forward and backward, with resets, right padding, input-dependent process noise and no input;
// the limits r → ∞ (vSSM) and r → 0 (x⁺ → w); gradients against central finite differences; on a GPU the fused
// filter's kernels against the same equations.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <vector>

#include "scan/kf_scan.hpp"

using rlm::scan::KfElements;
using rlm::scan::KfScanInputs;
using rlm::scan::KfScanOutput;

namespace {

const auto kF64 = torch::TensorOptions().dtype(torch::kFloat64);

torch::Tensor leaf(const torch::Tensor& t) { return t.detach().clone().requires_grad_(true); }

struct ProblemSpec {
  int64_t steps = 8, batch = 4, channels = 3;
  bool with_u = true;
  bool q_per_step = false;
  bool init_belief = true;
  bool resets = true;
  bool padding = false;
};

// Right padding: entry 0 is full, entry 1 three steps short, entry 2 half, entry 3 (if any) entirely padding.
std::vector<int64_t> lengths_for(int64_t steps, int64_t batch) {
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t options[4] = {steps, std::max<int64_t>(steps - 3, 1), (steps + 1) / 2, 0};
    lengths.push_back(options[b % 4]);
  }
  return lengths;
}

KfScanInputs random_problem(const ProblemSpec& s, torch::Dtype dtype = torch::kFloat64) {
  const auto o = torch::TensorOptions().dtype(dtype);
  KfScanInputs in;
  in.a = leaf(torch::rand({s.channels}, o) * 0.6 + 0.39);  // (0.39, 0.99)
  in.q =
      leaf(s.q_per_step ? torch::rand({s.steps, s.batch, s.channels}, o) + 0.05 : torch::rand({s.channels}, o) + 0.05);
  if (s.with_u) {
    in.beta = leaf(torch::randn({s.channels}, o));
    in.u = leaf(torch::randn({s.steps, s.batch, s.channels}, o));
  }
  in.w = leaf(torch::randn({s.steps, s.batch, s.channels}, o) * 2.0);
  in.r = leaf(torch::exp(torch::randn({s.steps, s.batch, s.channels}, o) * 1.5));
  if (s.init_belief) {
    in.init_mean = leaf(torch::randn({s.batch, s.channels}, o));
    in.init_var = leaf(torch::rand({s.batch, s.channels}, o) * 2.0 + 0.1);
  }
  if (s.resets) {
    in.starts = torch::rand({s.steps, s.batch}) < 0.15;
    in.starts[0][0] = true;
    if (s.steps > 3) in.starts[s.steps / 2][1] = true;
  }
  if (s.padding) {
    in.pad = torch::zeros({s.steps, s.batch}, torch::kBool);
    const auto lengths = lengths_for(s.steps, s.batch);
    for (int64_t b = 0; b < s.batch; ++b) in.pad.slice(0, lengths[b]).select(1, b).fill_(true);
  }
  return in;
}

std::vector<torch::Tensor> leaves(const KfScanInputs& in) {
  std::vector<torch::Tensor> out;
  for (const auto* t : {&in.a, &in.beta, &in.q, &in.u, &in.w, &in.r, &in.init_mean, &in.init_var})
    if (t->defined()) out.push_back(*t);
  return out;
}

// A scalar function of both outputs with fixed random weights, so every output element matters.
torch::Tensor objective(const KfScanOutput& out, const torch::Tensor& g_mean, const torch::Tensor& g_var) {
  return (out.mean * g_mean).sum() + (out.var * g_var).sum();
}

double max_abs_diff(const torch::Tensor& x, const torch::Tensor& y) { return (x - y).abs().max().item<double>(); }

using ScanFn = KfScanOutput (*)(const KfScanInputs&);

void check_scan_matches_reference(const ProblemSpec& spec, double tol, ScanFn scan_fn) {
  const KfScanInputs in = random_problem(spec);
  const auto scan = scan_fn(in);
  const auto ref = rlm::scan::kf_scan_reference(in);
  REQUIRE(scan.mean.sizes() == ref.mean.sizes());
  REQUIRE(scan.var.sizes() == ref.var.sizes());
  CHECK(max_abs_diff(scan.mean, ref.mean) < tol);
  CHECK(max_abs_diff(scan.var, ref.var) < tol);

  const auto g_mean = torch::randn_like(scan.mean);
  const auto g_var = torch::randn_like(scan.var);
  const auto params = leaves(in);
  const auto grads_scan = torch::autograd::grad({objective(scan, g_mean, g_var)}, params);
  const auto grads_ref = torch::autograd::grad({objective(ref, g_mean, g_var)}, params);
  for (size_t k = 0; k < params.size(); ++k) {
    INFO("gradient of input " << k);
    CHECK(max_abs_diff(grads_scan[k], grads_ref[k]) < tol * (1.0 + grads_ref[k].abs().max().item<double>()));
  }
}

}  // namespace

TEST_CASE("kf scan: Hillis-Steele and the fused CPU filter equal the sequential KF, forward and gradients, float64",
          "[memory][kf][scan]") {
  torch::manual_seed(11);
  for (int64_t steps : {1, 2, 31, 64, 100}) {
    for (int variant = 0; variant < 4; ++variant) {
      for (int64_t channels : {3, 300}) {  // 300: two work blocks of the CPU filter
        if (channels == 300 && steps > 31) continue;
        ProblemSpec spec;
        spec.steps = steps;
        spec.channels = channels;
        spec.with_u = variant != 1;       // 1: the vSSM+KF-u form (no input)
        spec.q_per_step = variant == 2;   // 2: input-dependent process noise
        spec.init_belief = variant != 3;  // 3: start from the reset belief N(0, 1)
        spec.padding = variant >= 2;
        INFO("T = " << steps << ", N = " << channels << ", variant " << variant);
        {
          INFO("kf_scan_parallel (Hillis-Steele)");
          check_scan_matches_reference(spec, 1e-10, rlm::scan::kf_scan_parallel);
        }
        {
          INFO("kf_scan (on the CPU: the fused filter)");
          check_scan_matches_reference(spec, 1e-10, rlm::scan::kf_scan);
        }
      }
    }
  }
}

TEST_CASE("kf scan: the GPU's fused filter equals the sequential KF, forward and gradients",
          "[memory][kf][scan][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  // kf_scan on CUDA tensors (the filter kernels of kf_filter_cuda.cu) against the sequential equations on the CPU in
  // float64, with the variants of the CPU test: no input, per-step process noise, the reset belief, padding; 300
  // channels: more than one block of threads.
  torch::manual_seed(12);
  for (const auto dtype : {torch::kFloat64, torch::kFloat32}) {
    for (int64_t steps : {1, 31, 100}) {
      for (int variant = 0; variant < 4; ++variant) {
        ProblemSpec spec;
        spec.steps = steps;
        spec.channels = 300;
        spec.with_u = variant != 1;
        spec.q_per_step = variant == 2;
        spec.init_belief = variant != 3;
        spec.padding = variant >= 2;
        INFO("T = " << steps << ", variant " << variant << ", " << (dtype == torch::kFloat64 ? "float64" : "float32"));
        const KfScanInputs in = random_problem(spec);
        KfScanInputs on_gpu;  // leaves of their own on the device, converted from the same values
        for (auto [from, to] : {std::pair{&in.a, &on_gpu.a},
                                {&in.beta, &on_gpu.beta},
                                {&in.q, &on_gpu.q},
                                {&in.u, &on_gpu.u},
                                {&in.w, &on_gpu.w},
                                {&in.r, &on_gpu.r},
                                {&in.init_mean, &on_gpu.init_mean},
                                {&in.init_var, &on_gpu.init_var}})
          if (from->defined()) *to = leaf(from->to(torch::kCUDA, dtype));
        if (in.starts.defined()) on_gpu.starts = in.starts.cuda();
        if (in.pad.defined()) on_gpu.pad = in.pad.cuda();
        const auto got = rlm::scan::kf_scan(on_gpu);
        const auto ref = rlm::scan::kf_scan_reference(in);
        const double tol = dtype == torch::kFloat64 ? 1e-10 : 2e-4;
        CHECK(max_abs_diff(got.mean.cpu().to(torch::kFloat64), ref.mean) <
              tol * (1.0 + ref.mean.abs().max().item<double>()));
        CHECK(max_abs_diff(got.var.cpu().to(torch::kFloat64), ref.var) <
              tol * (1.0 + ref.var.abs().max().item<double>()));
        const auto g_mean = torch::randn_like(ref.mean), g_var = torch::randn_like(ref.var);
        const auto gpu_params = leaves(on_gpu), ref_params = leaves(in);
        const auto grads_gpu = torch::autograd::grad(
            {objective(got, g_mean.to(torch::kCUDA, dtype), g_var.to(torch::kCUDA, dtype))}, gpu_params);
        const auto grads_ref = torch::autograd::grad({objective(ref, g_mean, g_var)}, ref_params);
        for (size_t k = 0; k < ref_params.size(); ++k) {
          INFO("gradient of input " << k);
          CHECK(max_abs_diff(grads_gpu[k].cpu().to(torch::kFloat64), grads_ref[k]) <
                tol * (1.0 + grads_ref[k].abs().max().item<double>()));
        }
      }
    }
  }
}

TEST_CASE("kf scan: float32 agrees with the float64 reference", "[memory][kf][scan]") {
  torch::manual_seed(12);
  ProblemSpec spec;
  spec.steps = 100;
  spec.padding = true;
  const KfScanInputs in64 = random_problem(spec);
  KfScanInputs in32 = in64;
  for (auto* t : {&in32.a, &in32.beta, &in32.q, &in32.u, &in32.w, &in32.r, &in32.init_mean, &in32.init_var})
    *t = t->detach().to(torch::kFloat32);
  const auto ref = rlm::scan::kf_scan_reference(in64);
  for (ScanFn scan_fn : {rlm::scan::kf_scan, rlm::scan::kf_scan_parallel}) {
    const auto scan = scan_fn(in32);
    CHECK(max_abs_diff(scan.mean.to(torch::kFloat64), ref.mean) < 1e-5);
    CHECK(max_abs_diff(scan.var.to(torch::kFloat64), ref.var) < 1e-5);
  }
}

TEST_CASE("kf scan: right padding repeats the last valid state and leaves valid steps unchanged",
          "[memory][kf][scan]") {
  torch::manual_seed(13);
  for (int64_t steps : {1, 2, 31, 64}) {
    ProblemSpec spec;
    spec.steps = steps;
    spec.padding = true;
    const KfScanInputs padded = random_problem(spec);
    KfScanInputs unpadded = padded;
    unpadded.pad = torch::Tensor();
    const auto with_pad = rlm::scan::kf_scan(padded);
    const auto without = rlm::scan::kf_scan(unpadded);
    const auto lengths = lengths_for(steps, spec.batch);
    for (int64_t b = 0; b < spec.batch; ++b) {
      INFO("T = " << steps << ", entry " << b << ", length " << lengths[b]);
      const int64_t len = lengths[b];
      if (len > 0) {
        CHECK(max_abs_diff(with_pad.mean.slice(0, 0, len).select(1, b), without.mean.slice(0, 0, len).select(1, b)) <
              1e-12);
        CHECK(max_abs_diff(with_pad.var.slice(0, 0, len).select(1, b), without.var.slice(0, 0, len).select(1, b)) <
              1e-12);
      }
      // Padded steps hold the last valid belief (the initial belief when the whole sequence is padding).
      const auto last_mean = len > 0 ? with_pad.mean[len - 1][b] : padded.init_mean[b];
      const auto last_var = len > 0 ? with_pad.var[len - 1][b] : padded.init_var[b];
      for (int64_t t = len; t < steps; ++t) {
        CHECK(max_abs_diff(with_pad.mean[t][b], last_mean) < 1e-12);
        CHECK(max_abs_diff(with_pad.var[t][b], last_var) < 1e-12);
      }
    }
  }
}

TEST_CASE("kf scan: r to infinity gives the vSSM, r to 0 gives the observation", "[memory][kf][scan]") {
  torch::manual_seed(14);
  ProblemSpec spec;
  spec.steps = 64;
  spec.init_belief = false;  // x⁺_{-1} = 0 as in the vSSM
  KfScanInputs in = random_problem(spec);
  in.r = torch::full_like(in.w, 1e12);
  const auto big_r = rlm::scan::kf_scan(in);
  const auto vssm = rlm::scan::diag_linear_scan_reference(in.a, in.beta * in.u, {}, in.starts);
  CHECK(max_abs_diff(big_r.mean, vssm) < 1e-8);
  // No update: P⁺ follows the predict recursion P = a² P + q from P = 1 (the reset belief).
  torch::Tensor var = torch::ones({spec.batch, spec.channels}, kF64);
  for (int64_t t = 0; t < spec.steps; ++t) {
    var = torch::where(in.starts[t].unsqueeze(-1), 1.0, var);
    var = in.a * in.a * var + in.q;
    CHECK(max_abs_diff(big_r.var[t], var) < 1e-8);
  }

  in.r = torch::full_like(in.w, 1e-12);
  const auto small_r = rlm::scan::kf_scan(in);
  CHECK(max_abs_diff(small_r.mean, in.w) < 1e-8);
  CHECK(small_r.var.abs().max().item<double>() < 1e-8);
}

TEST_CASE("kf scan: the combine operator is associative with the identity (1, 0, 0, 0, 0)", "[memory][kf][scan]") {
  torch::manual_seed(15);
  auto element = [] {
    return KfElements{torch::rand({50}, kF64) * 2 - 1, torch::randn({50}, kF64), torch::rand({50}, kF64) * 3,
                      torch::randn({50}, kF64), torch::rand({50}, kF64) * 3};
  };
  const KfElements e1 = element(), e2 = element(), e3 = element();
  const KfElements left = rlm::scan::kf_combine(rlm::scan::kf_combine(e1, e2), e3);
  const KfElements right = rlm::scan::kf_combine(e1, rlm::scan::kf_combine(e2, e3));
  const KfElements id{torch::ones({50}, kF64), torch::zeros({50}, kF64), torch::zeros({50}, kF64),
                      torch::zeros({50}, kF64), torch::zeros({50}, kF64)};
  const KfElements e1_id = rlm::scan::kf_combine(e1, id), id_e1 = rlm::scan::kf_combine(id, e1);
  const std::vector<std::pair<const KfElements*, const KfElements*>> pairs = {
      {&left, &right}, {&e1_id, &e1}, {&id_e1, &e1}};
  for (const auto& [x, y] : pairs) {
    CHECK(max_abs_diff(x->A, y->A) < 1e-12);
    CHECK(max_abs_diff(x->b, y->b) < 1e-12);
    CHECK(max_abs_diff(x->C, y->C) < 1e-12);
    CHECK(max_abs_diff(x->eta, y->eta) < 1e-12);
    CHECK(max_abs_diff(x->J, y->J) < 1e-12);
  }
}

TEST_CASE("kf scan: autograd gradients equal central finite differences", "[memory][kf][scan]") {
  torch::manual_seed(16);
  ProblemSpec spec;
  spec.steps = 6;
  spec.batch = 2;
  spec.channels = 2;
  spec.q_per_step = true;
  spec.resets = false;
  KfScanInputs in = random_problem(spec);
  in.starts = torch::zeros({6, 2}, torch::kBool);
  in.starts[3][1] = true;  // a reset inside the sequence
  in.pad = torch::zeros({6, 2}, torch::kBool);
  in.pad.slice(0, 4).select(1, 0).fill_(true);  // entry 0 is two steps shorter
  const auto out = rlm::scan::kf_scan(in);
  const auto g_mean = torch::randn_like(out.mean);
  const auto g_var = torch::randn_like(out.var);
  const auto params = leaves(in);
  const auto grads = torch::autograd::grad({objective(out, g_mean, g_var)}, params);

  const double eps = 1e-6;
  torch::NoGradGuard no_grad;
  for (size_t k = 0; k < params.size(); ++k) {
    auto flat = params[k].view(-1);
    const auto analytic = grads[k].reshape(-1);
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double original = flat[i].item<double>();
      flat[i] = original + eps;
      const double plus = objective(rlm::scan::kf_scan(in), g_mean, g_var).item<double>();
      flat[i] = original - eps;
      const double minus = objective(rlm::scan::kf_scan(in), g_mean, g_var).item<double>();
      flat[i] = original;
      const double numeric = (plus - minus) / (2 * eps);
      const double exact = analytic[i].item<double>();
      INFO("input " << k << ", element " << i << ": autograd " << exact << ", finite differences " << numeric);
      CHECK(std::abs(numeric - exact) < 1e-6 * (1.0 + std::abs(exact)));
    }
  }
}

TEST_CASE("kf scan: the diagonal linear scan equals its loop, with resets and padding", "[memory][kf][scan]") {
  torch::manual_seed(17);
  for (int64_t steps : {1, 2, 31, 64, 100}) {
    INFO("T = " << steps);
    const auto alpha = leaf(torch::rand({5}, kF64) * 0.6 + 0.39);
    const auto c = leaf(torch::randn({steps, 4, 5}, kF64));
    const auto h0 = leaf(torch::randn({4, 5}, kF64));
    auto starts = torch::rand({steps, 4}) < 0.15;
    starts[0][0] = true;
    auto pad = torch::zeros({steps, 4}, torch::kBool);
    const auto lengths = lengths_for(steps, 4);
    for (int64_t b = 0; b < 4; ++b) pad.slice(0, lengths[b]).select(1, b).fill_(true);
    for (bool with_pad : {false, true}) {
      const auto p = with_pad ? pad : torch::Tensor();
      const auto scan = rlm::scan::diag_linear_scan(alpha, c, h0, starts, p);
      const auto ref = rlm::scan::diag_linear_scan_reference(alpha, c, h0, starts, p);
      CHECK(max_abs_diff(scan, ref) < 1e-12);
      const auto g = torch::randn_like(ref);
      const auto gs = torch::autograd::grad({(scan * g).sum()}, {alpha, c, h0});
      const auto gr = torch::autograd::grad({(ref * g).sum()}, {alpha, c, h0});
      for (size_t k = 0; k < 3; ++k) CHECK(max_abs_diff(gs[k], gr[k]) < 1e-10);
    }
  }
}

// Hidden (run with "[kf_bench]"): forward + backward time of the scan and of the sequential loop, float32.
TEST_CASE("kf scan: timing of scan and loop", "[.][kf_bench]") {
  torch::set_num_threads(1);
  for (int64_t steps : {64, 256, 1024}) {
    ProblemSpec spec;
    spec.steps = steps;
    spec.batch = 8;
    spec.channels = 128;
    const KfScanInputs in = random_problem(spec, torch::kFloat32);
    for (bool reference : {false, true}) {
      const auto begin = std::chrono::steady_clock::now();
      const int reps = 3;
      for (int i = 0; i < reps; ++i) {
        const auto out = reference ? rlm::scan::kf_scan_reference(in) : rlm::scan::kf_scan(in);
        (out.mean.sum() + out.var.sum()).backward();
      }
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
      WARN((reference ? "loop" : "scan") << " T = " << steps << ", B = 8, N = 128: " << ms / reps
                                         << " ms forward + backward");
    }
  }
}
