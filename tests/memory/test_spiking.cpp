// Spiking-gate cell (docs/models/spiking.md): stepping equals sequence mode (eval and seeded training mode), resets,
// the scans against a plain loop of the paper's equations, the surrogate gradient, parameter count, a learned task.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <string>

#include "memory/spiking.hpp"

using rlm::memory::MemoryState;
using rlm::memory::Spiking;
using rlm::memory::SpikingForgetGate;
using rlm::memory::SpikingOptions;
using rlm::memory::SpikingSurrogate;
using rlm::memory::SpikingTrace;

namespace {

constexpr double kPi = 3.14159265358979323846;

// θ = −0.5 puts the acting threshold at 0, where the test inputs make roughly half the gates fire.
SpikingOptions test_options(int64_t hidden, SpikingForgetGate forget = SpikingForgetGate::kInputDependent) {
  SpikingOptions o;
  o.hidden_size = hidden;
  o.output_size = hidden + 3;
  o.theta = -0.5;
  o.forget_gate = forget;
  return o;
}

MemoryState random_state(int64_t batch, int64_t hidden) {
  return {{torch::randn({batch, hidden, 2}), torch::randn({batch, 2 * hidden}) * 0.3}};
}

torch::Tensor test_starts(int64_t steps, int64_t batch) {
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[0][0] = true;  // entry 0 starts at t = 0, the others continue the given state
  starts[4][1] = true;
  starts[9][0] = true;
  starts[9][2] = true;
  return starts;
}

// Runs `cell` one step at a time (T = 1 per call), carrying the state.
rlm::memory::MemoryOutput run_stepped(Spiking& cell, const torch::Tensor& x, const MemoryState& s0,
                                      const torch::Tensor& starts) {
  MemoryState state = s0;
  std::vector<torch::Tensor> outs;
  for (int64_t t = 0; t < x.size(0); ++t) {
    auto step = cell.forward(x.slice(0, t, t + 1), state, starts.slice(0, t, t + 1));
    outs.push_back(step.y);
    state = step.state;
  }
  return {torch::cat(outs, 0), state};
}

void check_same(const rlm::memory::MemoryOutput& a, const rlm::memory::MemoryOutput& b) {
  REQUIRE(a.y.sizes() == b.y.sizes());
  CHECK(torch::allclose(a.y, b.y, 1e-5, 1e-5));
  REQUIRE(a.state.tensors.size() == b.state.tensors.size());
  for (size_t i = 0; i < a.state.tensors.size(); ++i)
    CHECK(torch::allclose(a.state.tensors[i], b.state.tensors[i], 1e-5, 1e-5));
}

// The spiking paper's per-step equations (Eqs. 7–11) as a plain float64 loop over t with explicit real and
// imaginary parts; `threshold` is V_th broadcastable to [T, B, 2·N_h].
torch::Tensor reference_loop(Spiking& cell, const torch::Tensor& x, const MemoryState& s0, const torch::Tensor& starts,
                             const torch::Tensor& threshold) {
  const auto& o = cell.options();
  const int64_t nh = o.hidden_size, steps = x.size(0), nout = o.resolved_output_size();
  auto params = cell.named_parameters();
  auto p = [&](const std::string& name) { return params[name].detach().to(torch::kFloat64); };
  const auto w_in = p("in_proj.weight"), b_in = p("in_proj.bias");
  const auto w_y = p("out_proj.weight"), b_y = p("out_proj.bias");
  auto k = torch::sigmoid(p("leak_logit"));
  k = k.expand({2, nh}).reshape({2 * nh});
  const auto xd = x.to(torch::kFloat64);
  const auto th = threshold.to(torch::kFloat64).expand({steps, x.size(1), 2 * nh});
  auto h_re = s0.tensors[0].select(-1, 0).to(torch::kFloat64);
  auto h_im = s0.tensors[0].select(-1, 1).to(torch::kFloat64);
  auto m = s0.tensors[1].to(torch::kFloat64);
  std::vector<torch::Tensor> outs;
  for (int64_t t = 0; t < steps; ++t) {
    const auto keep = (~starts[t]).to(torch::kFloat64).unsqueeze(-1);
    h_re = h_re * keep;
    h_im = h_im * keep;
    m = m * keep;
    const auto proj = torch::matmul(xd[t], w_in.t()) + b_in;
    const auto wx_re = proj.narrow(-1, 0, nh), wx_im = proj.narrow(-1, nh, nh);
    const auto u = proj.narrow(-1, 2 * nh, 2 * nh);
    m = (1 - k) * m + k * u;                          // Eq. 7, no reset after a spike
    const auto s = (m >= th[t]).to(torch::kFloat64);  // Θ(m − V_th)
    const auto s_in = s.narrow(-1, 0, nh), s_out = s.narrow(-1, nh, nh);
    torch::Tensor c_re, c_im;
    if (o.forget_gate == SpikingForgetGate::kInputDependent) {
      const auto ch_re = proj.narrow(-1, 4 * nh, nh), ch_im = proj.narrow(-1, 5 * nh, nh);
      const auto r = torch::sqrt(ch_re * ch_re + ch_im * ch_im + 1);
      c_re = ch_re * torch::tanh(r) / r;
      c_im = ch_im * torch::tanh(r) / r;
    } else {
      const auto mod = torch::exp(-torch::exp(p("lru_nu_log")));
      const auto ang = torch::exp(p("lru_phase_log"));
      c_re = mod * torch::cos(ang);
      c_im = mod * torch::sin(ang);
    }
    // h ← s_in ? c·h + W_x x : h (complex product written out).
    const auto new_re = c_re * h_re - c_im * h_im + wx_re;
    const auto new_im = c_re * h_im + c_im * h_re + wx_im;
    h_re = torch::where(s_in > 0.5, new_re, h_re);
    h_im = torch::where(s_in > 0.5, new_im, h_im);
    const auto y_re = torch::where(s_out > 0.5, h_re, wx_re);
    const auto y_im = torch::where(s_out > 0.5, h_im, wx_im);
    auto y = torch::matmul(torch::cat({y_re, y_im}, -1), w_y.t()) + b_y;
    const auto mean = y.mean(-1, true);
    const auto var = (y - mean).pow(2).mean(-1, true);
    outs.push_back(((y - mean) / torch::sqrt(var + o.layer_norm_eps)).unsqueeze(0));
    REQUIRE(y.size(-1) == nout);
  }
  return torch::cat(outs, 0);
}

}  // namespace

TEST_CASE("spiking: stepping one step at a time equals one call over the sequence", "[memory][spiking]") {
  torch::manual_seed(1);
  const int64_t steps = 12, batch = 3, hidden = 8;
  Spiking cell(5, test_options(hidden));
  auto x = torch::randn({steps, batch, 5});
  auto starts = test_starts(steps, batch);
  auto s0 = random_state(batch, hidden);

  SECTION("eval mode, fixed threshold") {
    cell.eval();
    SpikingTrace trace;
    auto whole = cell.forward_traced(x, s0, starts, &trace);
    // The test is only meaningful if gates both fire and stay closed.
    const double rate = trace.gates.mean().item<double>();
    CHECK(rate > 0.2);
    CHECK(rate < 0.8);
    check_same(whole, run_stepped(cell, x, s0, starts));
  }
  SECTION("training mode, random thresholds drawn from a seeded generator") {
    cell.train();
    torch::manual_seed(77);
    SpikingTrace trace;
    auto whole = cell.forward_traced(x, s0, starts, &trace);
    CHECK(trace.threshold.sizes() == torch::IntArrayRef({steps, batch, 2 * hidden}));
    torch::manual_seed(77);
    check_same(whole, run_stepped(cell, x, s0, starts));
    // A different seed draws different thresholds and, here, different outputs: the draws matter.
    torch::manual_seed(78);
    auto other = cell.forward(x, s0, starts);
    CHECK_FALSE(torch::allclose(whole.y, other.y, 1e-4, 1e-4));
  }
  SECTION("LRU forget gate, eval mode") {
    torch::manual_seed(3);
    Spiking lru(5, test_options(hidden, SpikingForgetGate::kLru));
    lru.eval();
    check_same(lru.forward(x, s0, starts), run_stepped(lru, x, s0, starts));
  }
}

TEST_CASE("spiking: acting steps (eval, no autograd) equal sequence mode", "[memory][spiking]") {
  // How PPO acts: T = 1 calls in eval mode without autograd. They must match one call over the sequence for every gate
  // and forget-gate option, resets included.
  torch::manual_seed(2);
  const int64_t steps = 12, batch = 3, hidden = 8;
  auto x = torch::randn({steps, batch, 5});
  auto starts = test_starts(steps, batch);
  auto s0 = random_state(batch, hidden);
  auto check_option = [&](const SpikingOptions& options) {
    Spiking cell(5, options);
    cell.eval();
    SpikingTrace trace;
    auto whole = cell.forward_traced(x, s0, starts, &trace);
    const double rate = trace.gates.mean().item<double>();
    CHECK(rate > 0.2);
    CHECK(rate < 0.8);
    torch::NoGradGuard no_grad;
    check_same(whole, run_stepped(cell, x, s0, starts));
  };
  SECTION("spike gates, input-dependent forget gate") { check_option(test_options(hidden)); }
  SECTION("spike gates, |c| read as tanh(|ĉ|)/r") {
    auto options = test_options(hidden);
    options.magnitude_in_tanh = false;
    check_option(options);
  }
  SECTION("spike gates, LRU forget gate, shared leak") {
    auto options = test_options(hidden, SpikingForgetGate::kLru);
    options.shared_leak = true;
    check_option(options);
  }
  SECTION("sigmoid gates") {
    auto options = test_options(hidden);
    options.gate = rlm::memory::SpikingGate::kSigmoid;
    check_option(options);
  }
}

TEST_CASE("spiking: a reset equals a fresh zero state", "[memory][spiking]") {
  torch::manual_seed(2);
  const int64_t hidden = 6;
  Spiking cell(4, test_options(hidden));
  cell.eval();
  auto prefix = torch::randn({5, 2, 4});
  auto episode = torch::randn({7, 2, 4});
  auto starts = torch::zeros({12, 2}, torch::kBool);
  starts[5].fill_(true);
  auto with_history = cell.forward(torch::cat({prefix, episode}, 0), cell.initial_state(2, torch::kCPU), starts);
  auto fresh = cell.forward(episode, cell.initial_state(2, torch::kCPU), torch::zeros({7, 2}, torch::kBool));
  CHECK(torch::allclose(with_history.y.slice(0, 5), fresh.y, 1e-6, 1e-6));
  CHECK(torch::allclose(with_history.state.tensors[0], fresh.state.tensors[0], 1e-6, 1e-6));
  CHECK(torch::allclose(with_history.state.tensors[1], fresh.state.tensors[1], 1e-6, 1e-6));
  // Without the reset the history changes the output (the test can fail).
  auto no_reset = cell.forward(torch::cat({prefix, episode}, 0), cell.initial_state(2, torch::kCPU),
                               torch::zeros({12, 2}, torch::kBool));
  CHECK_FALSE(torch::allclose(no_reset.y.slice(0, 5), fresh.y, 1e-4, 1e-4));
  // The initial state is all zeros and holds 4·N_h floats per entry (spiking paper App. F.3).
  auto s = cell.initial_state(3, torch::kCPU);
  int64_t floats = 0;
  for (const auto& t : s.tensors) {
    CHECK(t.size(0) == 3);
    CHECK(t.abs().sum().item<double>() == 0.0);
    floats += t.numel() / 3;
  }
  CHECK(floats == 4 * hidden);
}

TEST_CASE("spiking: the scan-based forward equals a plain loop of the paper's equations", "[memory][spiking]") {
  const int64_t steps = 15, batch = 3, hidden = 7;
  auto x = torch::randn({steps, batch, 5});
  auto starts = test_starts(steps, batch);

  SECTION("input-dependent forget gate, eval mode") {
    torch::manual_seed(4);
    Spiking cell(5, test_options(hidden));
    cell.eval();
    auto s0 = random_state(batch, hidden);
    auto out = cell.forward(x, s0, starts);
    auto ref = reference_loop(cell, x, s0, starts, torch::tensor(0.0));  // θ + E[X] = −0.5 + 0.5
    CHECK(torch::allclose(out.y.to(torch::kFloat64), ref, 1e-5, 1e-5));
  }
  SECTION("LRU forget gate, eval mode") {
    torch::manual_seed(5);
    Spiking cell(5, test_options(hidden, SpikingForgetGate::kLru));
    cell.eval();
    auto s0 = random_state(batch, hidden);
    auto out = cell.forward(x, s0, starts);
    auto ref = reference_loop(cell, x, s0, starts, torch::tensor(0.0));
    CHECK(torch::allclose(out.y.to(torch::kFloat64), ref, 1e-5, 1e-5));
  }
  SECTION("training mode: V_th = θ + U(0, 1) per (t, b, neuron), drawn as torch::rand({T, B, 2 N_h})") {
    torch::manual_seed(6);
    Spiking cell(5, test_options(hidden));
    cell.train();
    auto s0 = random_state(batch, hidden);
    torch::manual_seed(99);
    const auto noise = torch::rand({steps, batch, 2 * hidden});
    torch::manual_seed(99);
    SpikingTrace trace;
    auto out = cell.forward_traced(x, s0, starts, &trace);
    CHECK(torch::allclose(trace.threshold, noise - 0.5));
    auto ref = reference_loop(cell, x, s0, starts, noise - 0.5);
    CHECK(torch::allclose(out.y.to(torch::kFloat64), ref, 1e-5, 1e-5));
  }
}

TEST_CASE("spiking: an input gate that never fires keeps h exactly and shuts the past out", "[memory][spiking]") {
  torch::manual_seed(8);
  const int64_t steps = 9, batch = 2, hidden = 5;
  auto o = test_options(hidden);
  o.surrogate = SpikingSurrogate::kNone;  // the true gradient of Θ (saliency, spiking paper App. C.3)
  Spiking cell(3, o);
  cell.eval();
  {
    torch::NoGradGuard no_grad;
    cell.named_parameters()["in_proj.bias"].narrow(0, 2 * hidden, hidden).fill_(-100.0);  // u_in ≪ V_th
  }
  auto x = torch::randn({steps, batch, 3}, torch::requires_grad());
  auto s0 = random_state(batch, hidden);
  auto out = cell.forward(x, s0, torch::zeros({steps, batch}, torch::kBool));
  CHECK(torch::equal(out.state.tensors[0], s0.tensors[0]));
  (out.y[steps - 1] * torch::randn_like(out.y[steps - 1])).sum().backward();
  CHECK(x.grad().slice(0, 0, steps - 1).abs().max().item<double>() == 0.0);
  CHECK(x.grad()[steps - 1].abs().max().item<double>() > 0.0);
}

TEST_CASE("spiking: surrogate gradient of the spike and gradients to every parameter", "[memory][spiking]") {
  const std::vector<double> points = {-1.5, -0.4, -0.05, 0.0, 0.1, 0.6, 2.0};
  auto z = torch::tensor(points, torch::kFloat64).requires_grad_(true);
  SECTION("arctan surrogate 1/(1+(πz)²), the derivative of atan(πz)/π") {
    auto s = rlm::memory::spike(z, SpikingSurrogate::kAtan);
    s.sum().backward();
    const double eps = 1e-6;
    for (size_t i = 0; i < points.size(); ++i) {
      const double zi = points[i];
      CHECK(s[i].item<double>() == (zi >= 0.0 ? 1.0 : 0.0));
      const double expected = 1.0 / (1.0 + (kPi * zi) * (kPi * zi));
      const double numeric = (std::atan(kPi * (zi + eps)) - std::atan(kPi * (zi - eps))) / (kPi * 2 * eps);
      CHECK(z.grad()[i].item<double>() == Approx(expected).epsilon(1e-12));
      CHECK(z.grad()[i].item<double>() == Approx(numeric).epsilon(1e-6));
    }
  }
  SECTION("gaussian surrogate, the derivative of the normal CDF") {
    auto s = rlm::memory::spike(z, SpikingSurrogate::kGaussian);
    s.sum().backward();
    const double eps = 1e-6;
    for (size_t i = 0; i < points.size(); ++i) {
      const double zi = points[i];
      auto cdf = [](double v) { return 0.5 * std::erfc(-v / std::sqrt(2.0)); };
      CHECK(z.grad()[i].item<double>() == Approx((cdf(zi + eps) - cdf(zi - eps)) / (2 * eps)).epsilon(1e-6));
    }
  }
  SECTION("gradients reach every parameter in training mode") {
    for (auto forget : {SpikingForgetGate::kInputDependent, SpikingForgetGate::kLru}) {
      for (bool shared : {false, true}) {
        torch::manual_seed(9);
        auto o = test_options(6, forget);
        o.shared_leak = shared;
        Spiking cell(4, o);
        cell.train();
        auto x = torch::randn({10, 3, 4});
        auto out = cell.forward(x, random_state(3, 6), test_starts(10, 3));
        (out.y * torch::randn_like(out.y)).sum().backward();
        for (const auto& p : cell.named_parameters()) {
          INFO(p.key());
          REQUIRE(p.value().grad().defined());
          CHECK(p.value().grad().abs().sum().item<double>() > 0.0);
          CHECK(torch::isfinite(p.value().grad()).all().item<bool>());
        }
      }
    }
  }
}

TEST_CASE("spiking: parameter count", "[memory][spiking]") {
  for (auto forget : {SpikingForgetGate::kInputDependent, SpikingForgetGate::kLru}) {
    for (bool shared : {false, true}) {
      auto o = test_options(9, forget);
      o.shared_leak = shared;
      Spiking cell(5, o);
      int64_t total = 0;
      for (const auto& p : cell.parameters()) total += p.numel();
      CHECK(total == Spiking::parameter_count(5, o));
    }
  }
  // POPGym size (spiking paper Table 8): N_x = 64, N_h = N_out = 1024: 6·(64+1)·1024 + 1024·(2·1024+1) + 2·1024.
  SpikingOptions popgym;
  popgym.hidden_size = 1024;
  CHECK(Spiking::parameter_count(64, popgym) == 2499584);
  CHECK(Spiking(64, popgym).initial_state(1, torch::kCPU).tensors[0].numel() +
            Spiking(64, popgym).initial_state(1, torch::kCPU).tensors[1].numel() ==
        4096);  // "state size 4096" (spiking paper Table 8)
}

// Recall the marked token: one-hot tokens at every step, one random step (never the last) carries a marker bit;
// the model must output that step's token at the last step. The paper's defaults (θ = 0, V_th ~ U(0, 1) in training,
// 0.5 when acting, k0 = 0.5); accuracy is measured in eval mode (fixed threshold) on fresh sequences.
TEST_CASE("spiking: learns to recall a marked token", "[memory][spiking][learning][slow]") {
  torch::manual_seed(11);
  torch::set_num_threads(1);
  const int64_t tokens = 8, steps = 16, batch = 64, hidden = 32, iterations = 800;
  SpikingOptions o;
  o.hidden_size = hidden;
  Spiking cell(tokens + 1, o);
  torch::nn::Linear head(hidden, tokens);
  std::vector<torch::Tensor> params = cell.parameters();
  for (const auto& p : head->parameters()) params.push_back(p);
  torch::optim::Adam opt(params, torch::optim::AdamOptions(3e-3));

  auto make_batch = [&](int64_t n) {
    auto tok = torch::randint(tokens, {steps, n}, torch::kLong);
    auto pos = torch::randint(steps - 1, {n}, torch::kLong);
    auto x = torch::zeros({steps, n, tokens + 1});
    x.scatter_(2, tok.unsqueeze(-1), 1.0);
    auto ar = torch::arange(n);
    x.index_put_({pos, ar, torch::full({n}, tokens, torch::kLong)}, 1.0);
    auto target = tok.index({pos, ar});
    return std::make_pair(x, target);
  };
  auto starts_for = [&](int64_t n) {
    auto s = torch::zeros({steps, n}, torch::kBool);
    s[0].fill_(true);
    return s;
  };

  const auto begin = std::chrono::steady_clock::now();
  for (int64_t it = 0; it < iterations; ++it) {
    cell.train();
    auto [x, target] = make_batch(batch);
    auto out = cell.forward(x, cell.initial_state(batch, torch::kCPU), starts_for(batch));
    auto logits = head->forward(out.y[steps - 1]);
    auto loss = torch::nn::functional::cross_entropy(logits, target);
    opt.zero_grad();
    loss.backward();
    opt.step();
  }
  cell.eval();
  torch::NoGradGuard no_grad;
  auto [x, target] = make_batch(2000);
  auto out = cell.forward(x, cell.initial_state(2000, torch::kCPU), starts_for(2000));
  const auto predicted = head->forward(out.y[steps - 1]).argmax(-1);
  const double accuracy = (predicted == target).to(torch::kFloat).mean().item<double>();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  INFO("accuracy " << accuracy << " after " << iterations << " iterations, " << seconds << " s");
  WARN("spiking recall: accuracy " << accuracy << ", " << seconds << " s");
  CHECK(accuracy >= 0.95);
}
