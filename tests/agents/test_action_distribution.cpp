// DiagGaussian (continuous actions) against closed forms and sampling statistics; ActionSpec mapping to env actions.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>

#include "agents/action_distribution.hpp"
#include "core/error.hpp"

using rlm::agents::ActionDistribution;
using rlm::agents::ActionSpec;
using rlm::agents::DiagGaussian;

TEST_CASE("diag gaussian: log_prob, entropy and kl match the closed forms", "[agents]") {
  // One 2-D distribution: mean (0.5, -1), std (2, 0.5).
  auto logits = torch::tensor({{0.5f, -1.0f, std::log(2.0f), std::log(0.5f)}});
  auto other = torch::tensor({{0.0f, 0.0f, 0.0f, 0.0f}});  // standard normal
  DiagGaussian d(logits), q(other);
  auto x = torch::tensor({{1.5f, -0.5f}});
  const double lp = -0.5 * std::pow((1.5 - 0.5) / 2.0, 2) - std::log(2.0) - 0.5 * std::log(2 * std::numbers::pi) +
                    -0.5 * std::pow((-0.5 + 1.0) / 0.5, 2) - std::log(0.5) - 0.5 * std::log(2 * std::numbers::pi);
  CHECK(d.log_prob(x).item<double>() == Approx(lp).epsilon(1e-6));
  const double h = std::log(2.0) + std::log(0.5) + 2 * (0.5 + 0.5 * std::log(2 * std::numbers::pi));
  CHECK(d.entropy().item<double>() == Approx(h).epsilon(1e-6));
  // KL(N(m, s^2) || N(0, 1)) = log(1/s) + (s^2 + m^2)/2 - 1/2 per dimension.
  const double kl = (std::log(1 / 2.0) + (4.0 + 0.25) / 2 - 0.5) + (std::log(1 / 0.5) + (0.25 + 1.0) / 2 - 0.5);
  CHECK(d.kl(q).item<double>() == Approx(kl).epsilon(1e-6));
  CHECK(d.kl(d).abs().item<double>() < 1e-6);

  auto gen = at::detail::createCPUGenerator(3);
  auto samples = DiagGaussian(logits.expand({20000, 4}).contiguous()).sample(gen);
  CHECK(samples.select(1, 0).mean().item<double>() == Approx(0.5).margin(0.05));
  CHECK(samples.select(1, 0).std().item<double>() == Approx(2.0).margin(0.05));
  CHECK(samples.select(1, 1).mean().item<double>() == Approx(-1.0).margin(0.02));
  CHECK(samples.select(1, 1).std().item<double>() == Approx(0.5).margin(0.02));
}

TEST_CASE("action spec: Box actions are unsquashed from (-1, 1) onto the bounds and clipped", "[agents]") {
  const auto spec = ActionSpec::from_space(rlm::envs::Space::box({-2.0f}, {2.0f}), "test");
  CHECK(spec.continuous);
  CHECK(spec.num_logits() == 2);
  std::vector<float> out(4);
  spec.to_env_actions(torch::tensor({-1.0f, 0.0f, 0.5f, 7.0f}).reshape({4, 1}), out);
  CHECK(out == std::vector<float>{-2.0f, 0.0f, 1.0f, 2.0f});

  const auto discrete = ActionSpec::from_space(rlm::envs::Space::multi_discrete({3, 4}), "test");
  CHECK_FALSE(discrete.continuous);
  CHECK(discrete.num_logits() == 7);
  CHECK(discrete.action_size() == 2);
  ActionDistribution dist(discrete, torch::zeros({5, 7}));
  auto a = dist.sample(at::detail::createCPUGenerator(1));
  CHECK(a.dtype() == torch::kFloat32);
  CHECK(a.sizes() == torch::IntArrayRef({5, 2}));
  CHECK_THROWS_AS(ActionSpec::from_space(rlm::envs::Space::box({-INFINITY}, {INFINITY}), "x"), rlm::ConfigError);
}
