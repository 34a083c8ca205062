// KF backend (memory/kf.hpp): stepping with T = 1 equals sequence mode for every option, a reset equals a fresh
// state, gradients reach every parameter, parameter counts (docs/models/kf.md) and initial coefficients match the
// KF paper (App. B, Table 1), and a small model learns a recall task.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "memory/kf.hpp"

using rlm::memory::Kf;
using rlm::memory::KfOptions;
using rlm::memory::KfOutputFeatures;
using rlm::memory::KfPositive;
using rlm::memory::KfProcessNoise;
using rlm::memory::KfVariant;
using rlm::memory::MemoryState;

namespace {

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

double max_abs_diff(const torch::Tensor& x, const torch::Tensor& y) { return (x - y).abs().max().item<double>(); }

// Every option the backend has, each at least once; small sizes.
std::vector<std::pair<std::string, KfOptions>> configurations() {
  std::vector<std::pair<std::string, KfOptions>> out;
  KfOptions base;
  base.state_size = 8;
  out.emplace_back("kf", base);
  {
    KfOptions o = base;
    o.variant = KfVariant::kf_u;
    out.emplace_back("kf_u", o);
  }
  {
    KfOptions o = base;
    o.variant = KfVariant::vssm;
    out.emplace_back("vssm", o);
  }
  {
    KfOptions o = base;
    o.input_lag = 1;
    o.hidden_size = 6;  // with an input map D -> E
    out.emplace_back("kf input_lag 1, input map", o);
  }
  {
    KfOptions o = base;
    o.variant = KfVariant::vssm;
    o.input_lag = 1;
    out.emplace_back("vssm input_lag 1", o);
  }
  {
    KfOptions o = base;
    o.process_noise = KfProcessNoise::input_dependent;
    o.output_features = KfOutputFeatures::mean_cov;
    out.emplace_back("kf input-dependent q, mean_cov", o);
  }
  {
    KfOptions o = base;
    o.variant = KfVariant::kf_u;
    o.process_noise = KfProcessNoise::input_dependent;
    out.emplace_back("kf_u input-dependent q", o);
  }
  {
    KfOptions o = base;
    o.num_layers = 2;
    o.rms_norm = true;
    o.hidden_size = 7;
    out.emplace_back("kf two layers, final RMSNorm", o);
  }
  {
    KfOptions o = base;
    o.num_layers = 3;
    o.rms_norm = true;
    o.rms_norm_every_layer = true;
    o.input_lag = 1;
    o.positive = KfPositive::exp;
    o.learn_ab = false;
    out.emplace_back("kf three layers, RMSNorm every layer, lag 1, exp, fixed A B", o);
  }
  return out;
}

MemoryState random_state(const Kf& kf, int64_t batch) {
  MemoryState s = kf.initial_state(batch, torch::kCPU);
  for (auto& t : s.tensors) t = t + torch::rand_like(t);  // variances stay positive
  return s;
}

}  // namespace

TEST_CASE("kf: parameter counts for E 16 and N 128 equal docs/models/kf.md's", "[memory][kf]") {
  KfOptions o;  // N = 128, L = 1, variant kf, no RMSNorm
  CHECK(parameter_count(Kf(16, o)) == 8977);
  o.variant = KfVariant::kf_u;
  CHECK(parameter_count(Kf(16, o)) == 6673);
  o.variant = KfVariant::vssm;
  CHECK(parameter_count(Kf(16, o)) == 4497);

  o = KfOptions{};
  o.process_noise = KfProcessNoise::input_dependent;  // one more Linear(16 -> 128)
  CHECK(parameter_count(Kf(16, o)) == 8977 + 16 * 128 + 128);
  o = KfOptions{};
  o.output_features = KfOutputFeatures::mean_cov;  // Linear(256 -> 16) instead of Linear(128 -> 16)
  CHECK(parameter_count(Kf(16, o)) == 8977 + 128 * 16);
  o = KfOptions{};
  o.num_layers = 2;
  o.rms_norm = true;
  CHECK(parameter_count(Kf(16, o)) == 2 * 8977 + 16);
  o = KfOptions{};
  o.hidden_size = 16;  // input 5 mapped to E = 16
  Kf mapped(5, o);
  CHECK(mapped.output_size() == 16);
  CHECK(parameter_count(mapped) == 8977 + 5 * 16 + 16);
  o.learn_ab = false;
  CHECK(parameter_count(Kf(16, o)) == 8977 - 2 * 128);
}

TEST_CASE("kf: initial coefficients follow HiPPO, ZOH and q = 1", "[memory][kf]") {
  Kf kf(16, KfOptions{});
  const auto c = kf.layer(0).coefficients();
  CHECK(c.a[0].item<double>() == Approx(0.999089).epsilon(1e-6));
  CHECK(c.a[63].item<double>() == Approx(0.943335).epsilon(1e-6));
  CHECK(c.a[127].item<double>() == Approx(0.889881).epsilon(1e-6));
  // DC gain β / (1 − a) = 1 / (n + 1), and q = 1.
  const auto dc = (c.beta.to(torch::kFloat64) / (1.0 - c.a.to(torch::kFloat64)));
  const auto expected = 1.0 / torch::arange(1, 129, torch::kFloat64);
  CHECK(max_abs_diff(dc, expected) < 1e-3);
  CHECK(max_abs_diff(c.q, torch::ones({128})) < 1e-6);
  KfOptions e;
  e.positive = KfPositive::exp;
  CHECK(max_abs_diff(Kf(16, e).layer(0).coefficients().q, torch::ones({128})) < 1e-6);
}

TEST_CASE("kf: stepping one step at a time equals one call over the sequence", "[memory][kf]") {
  for (const auto& [name, options] : configurations()) {
    for (bool float64 : {true, false}) {
      INFO(name << (float64 ? ", float64" : ", float32"));
      torch::manual_seed(21);
      Kf kf(5, options);
      const auto dtype = float64 ? torch::kFloat64 : torch::kFloat32;
      kf.to(dtype);
      const int64_t steps = 13, batch = 3;
      const auto x = torch::randn({steps, batch, 5}, dtype);
      auto starts = torch::zeros({steps, batch}, torch::kBool);
      starts[0][2] = true;
      starts[4][1] = true;
      starts[9][0] = true;
      starts[9][2] = true;
      const MemoryState s0 = random_state(kf, batch);
      const auto whole = kf.forward(x, s0, starts);
      REQUIRE(whole.y.sizes() == torch::IntArrayRef({steps, batch, kf.output_size()}));

      MemoryState state = s0;
      std::vector<torch::Tensor> ys;
      for (int64_t t = 0; t < steps; ++t) {
        auto step = kf.forward(x.slice(0, t, t + 1), state, starts.slice(0, t, t + 1));
        ys.push_back(step.y);
        state = step.state;
      }
      const double tol = float64 ? 1e-10 : 2e-5;
      CHECK(max_abs_diff(whole.y, torch::cat(ys, 0)) < tol);
      REQUIRE(whole.state.tensors.size() == state.tensors.size());
      for (size_t k = 0; k < state.tensors.size(); ++k) {
        CHECK(whole.state.tensors[k].sizes() == s0.tensors[k].sizes());
        CHECK(max_abs_diff(whole.state.tensors[k], state.tensors[k]) < tol);
      }
      // Two halves with the state carried between them equal the whole as well.
      auto first = kf.forward(x.slice(0, 0, 6), s0, starts.slice(0, 0, 6));
      auto second = kf.forward(x.slice(0, 6), first.state, starts.slice(0, 6));
      CHECK(max_abs_diff(whole.y, torch::cat({first.y, second.y}, 0)) < tol);
    }
  }
}

TEST_CASE("kf: a reset equals a fresh initial state", "[memory][kf]") {
  for (const auto& [name, options] : configurations()) {
    INFO(name);
    torch::manual_seed(22);
    Kf kf(4, options);
    const auto prefix = torch::randn({5, 2, 4});
    const auto episode = torch::randn({7, 2, 4});
    auto starts = torch::zeros({12, 2}, torch::kBool);
    starts[5].fill_(true);
    const auto with_history = kf.forward(torch::cat({prefix, episode}, 0), random_state(kf, 2), starts).y.slice(0, 5);
    const auto fresh = kf.forward(episode, kf.initial_state(2, torch::kCPU), torch::zeros({7, 2}, torch::kBool)).y;
    CHECK(max_abs_diff(with_history, fresh) < 1e-5);
    // Without the reset the history changes the output (the test can fail).
    const auto no_reset =
        kf.forward(torch::cat({prefix, episode}, 0), random_state(kf, 2), torch::zeros({12, 2}, torch::kBool))
            .y.slice(0, 5);
    CHECK(max_abs_diff(no_reset, fresh) > 1e-4);
  }
}

TEST_CASE("kf: gradients reach every parameter", "[memory][kf]") {
  for (const auto& [name, options] : configurations()) {
    INFO(name);
    torch::manual_seed(23);
    Kf kf(5, options);
    const auto x = torch::randn({9, 3, 5});
    auto starts = torch::zeros({9, 3}, torch::kBool);
    starts[0].fill_(true);
    starts[5][1] = true;
    auto out = kf.forward(x, kf.initial_state(3, torch::kCPU), starts);
    (out.y * torch::randn_like(out.y)).sum().backward();
    for (const auto& p : kf.named_parameters()) {
      INFO("parameter " << p.key());
      REQUIRE(p.value().grad().defined());
      CHECK(p.value().grad().abs().sum().item<double>() > 0.0);
    }
  }
}

TEST_CASE("kf: invalid combinations are config errors", "[memory][kf]") {
  KfOptions o;
  o.variant = KfVariant::vssm;
  o.output_features = KfOutputFeatures::mean_cov;
  CHECK_THROWS_AS(Kf(4, o), rlm::ConfigError);
  o = KfOptions{};
  o.input_lag = 2;
  CHECK_THROWS_AS(Kf(4, o), rlm::ConfigError);
}

// Recall the first token: K random one-hot tokens per sequence plus a first-step flag (the cue an RL agent gets
// from a_{-1} = 0 or an episode-start observation); predict the first token from the output at the last step.
// Chance is 1/K. The KF learns it by making r small at the flagged step and large elsewhere. Sequences are short on
// purpose: at the KF paper's initialisation (Table 1) the gain is k ≈ 0.6 at every step, so the last output's
// sensitivity to the first observation starts near 0.4^(T−1); T = 5 or 6 learns within 200 Adam steps, T = 8 or 10
// stayed at chance for 600 steps (measured with the same model in PyTorch and here).
TEST_CASE("kf: learns to recall the first token", "[memory][kf][learning]") {
  torch::manual_seed(5);
  torch::set_num_threads(1);
  const int64_t tokens = 4, steps = 6, batch = 64, width = 16, iterations = 400;
  auto make_batch = [&](int64_t n) {
    const auto ids = torch::randint(tokens, {steps, n}, torch::kLong);
    auto x = torch::zeros({steps, n, tokens + 1});
    x.slice(2, 0, tokens).copy_(torch::one_hot(ids, tokens).to(torch::kFloat32));
    x[0].select(1, tokens).fill_(1.0);
    return std::make_pair(x, ids[0]);
  };
  KfOptions o;
  o.hidden_size = width;
  o.state_size = 16;
  Kf kf(tokens + 1, o);
  torch::nn::Linear head(width, tokens);
  std::vector<torch::Tensor> params = kf.parameters();
  for (const auto& p : head->parameters()) params.push_back(p);
  torch::optim::Adam adam(params, torch::optim::AdamOptions(1e-2));
  auto starts = [](int64_t n) {
    auto s = torch::zeros({steps, n}, torch::kBool);
    s[0].fill_(true);
    return s;
  };

  const auto begin = std::chrono::steady_clock::now();
  for (int64_t iteration = 0; iteration < iterations; ++iteration) {
    auto [x, target] = make_batch(batch);
    const auto y = kf.forward(x, kf.initial_state(batch, torch::kCPU), starts(batch)).y;
    const auto loss = torch::nn::functional::cross_entropy(head->forward(y[-1]), target);
    adam.zero_grad();
    loss.backward();
    adam.step();
  }
  torch::NoGradGuard no_grad;
  auto [x, target] = make_batch(2000);
  const auto y = kf.forward(x, kf.initial_state(2000, torch::kCPU), starts(2000)).y;
  const double accuracy = (head->forward(y[-1]).argmax(-1) == target).to(torch::kFloat64).mean().item<double>();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  WARN("recall-first accuracy " << accuracy << " after " << iterations << " Adam steps, " << seconds << " s");
  CHECK(accuracy >= 0.95);
}
