// Best-Arm identification (KF paper §5.2): the paper's code is not public, so the env is checked against returns
// computed in closed form: a uniformly random policy, and the rule "request n samples, then declare the sign of their
// mean", whose success probability given (μ, σ) is Φ(|μ|√n / σ).
#include <catch2/catch.hpp>
#include <cmath>

#include "envs/kf/best_arm.hpp"
#include "envs/registry.hpp"
#include "envs/rng.hpp"

using rlm::envs::kf::BestArm;

namespace {

struct Totals {
  double return_sum = 0, return_sq = 0, successes = 0, steps = 0;
  int episodes = 0;
  double mean() const { return return_sum / episodes; }
  double standard_error() const {
    const double m = mean();
    return std::sqrt((return_sq / episodes - m * m) / episodes);
  }
};

/// Plays `episodes` episodes; `policy(t, samples_sum, rng)` returns the action at step t (0-based).
template <class Policy>
Totals play(BestArm& env, int episodes, Policy policy) {
  Totals totals;
  rlm::envs::Rng rng(99);
  std::vector<float> obs(1);
  for (int e = 0; e < episodes; ++e) {
    env.reset(static_cast<uint64_t>(e) * 7919 + 1, obs);
    double episode_return = 0, sum = 0;
    for (int64_t t = 0;; ++t) {
      const float action = static_cast<float>(policy(t, sum, rng));
      const auto r = env.step({&action, 1}, obs);
      if (action == 0) sum += obs[0];
      episode_return += r.reward;
      totals.steps += 1;
      if (r.terminated) {
        totals.successes += r.success ? 1 : 0;
        break;
      }
    }
    totals.return_sum += episode_return;
    totals.return_sq += episode_return * episode_return;
    ++totals.episodes;
  }
  return totals;
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

}  // namespace

TEST_CASE("best arm: a uniformly random policy returns -rho/2 and succeeds half the time", "[envs][best_arm]") {
  // Decisions come with probability 2/3 per step, so 1/2 request before one on average; a decision is a coin flip.
  const double rho = 0.3;
  BestArm env("kf/BestArm", {.request_cost = rho});
  const int n = 200000;
  const auto totals = play(env, n, [](int64_t, double, rlm::envs::Rng& rng) { return rng.uniform_int(3); });
  INFO("mean return " << totals.mean() << " +- " << totals.standard_error());
  CHECK(std::abs(totals.mean() - (-0.5 * rho)) < 5 * totals.standard_error());
  CHECK(std::abs(totals.successes / n - 0.5) < 5 * std::sqrt(0.25 / n));
  CHECK(std::abs(totals.steps / n - 1.5) < 0.02);
}

TEST_CASE("best arm: the n-sample sign rule matches its closed-form return", "[envs][best_arm]") {
  const double rho = 0.05;
  for (auto [low, high] : {std::pair{0.0, 2.0}, std::pair{2.0, 3.0}}) {  // training, and out of distribution
    for (int samples : {1, 4}) {
      INFO("sigma ~ U(" << low << ", " << high << "), " << samples << " samples");
      // E over μ ~ U(-0.5, 0.5), σ ~ U(low, high) of 10 (2 Φ(|μ|√n/σ) - 1) - nρ, by the midpoint rule.
      const int grid = 400;
      double expected = 0;
      for (int i = 0; i < grid; ++i) {
        const double mu = -0.5 + (i + 0.5) / grid;
        for (int j = 0; j < grid; ++j) {
          const double sigma = low + (high - low) * (j + 0.5) / grid;
          expected += 10.0 * (2.0 * normal_cdf(std::abs(mu) * std::sqrt(samples) / sigma) - 1.0);
        }
      }
      expected = expected / (grid * grid) - samples * rho;
      BestArm env("kf/BestArm", {.request_cost = rho, .sigma_low = low, .sigma_high = high});
      const auto totals = play(env, 100000, [samples](int64_t t, double sum, rlm::envs::Rng&) {
        return t < samples ? 0 : (sum > 0 ? 1 : 2);
      });
      INFO("mean return " << totals.mean() << " +- " << totals.standard_error() << ", closed form " << expected);
      CHECK(std::abs(totals.mean() - expected) < 5 * totals.standard_error());
    }
  }
}

TEST_CASE("best arm: hidden parameters, observations, the time limit", "[envs][best_arm]") {
  BestArm env("kf/BestArm", {.request_cost = 0.5, .sigma_low = 2.0, .sigma_high = 3.0});
  std::vector<float> obs(1, 7.0f);
  double mean_sum = 0, mean_sq = 0;
  for (int e = 0; e < 20000; ++e) {
    env.reset(static_cast<uint64_t>(e), obs);
    REQUIRE(obs[0] == 0.0f);  // nothing is observed at reset
    REQUIRE(env.sigma() >= 2.0);
    REQUIRE(env.sigma() < 3.0);
    REQUIRE(std::abs(env.mean()) <= 0.5);
    mean_sum += env.mean();
    mean_sq += env.mean() * env.mean();
  }
  CHECK(std::abs(mean_sum / 20000) < 5 * std::sqrt(1.0 / 12 / 20000));
  CHECK(mean_sq / 20000 == Approx(1.0 / 12).epsilon(0.05));

  // 1000 requests without a decision: the last one also carries the wrong-decision penalty and ends the episode.
  env.reset(5, obs);
  const float request = 0;
  for (int64_t t = 1; t < BestArm::kMaxSteps; ++t) {
    const auto r = env.step({&request, 1}, obs);
    REQUIRE_FALSE(r.terminated);
    REQUIRE(r.reward == -0.5f);
  }
  const auto last = env.step({&request, 1}, obs);
  CHECK(last.terminated);
  CHECK_FALSE(last.success);
  CHECK(last.reward == -10.5f);
  CHECK_THROWS(env.step({&request, 1}, obs));
}

TEST_CASE("best arm: built from env.options", "[envs][best_arm]") {
  rlm::EnvOptions options;
  options.sigma_low = 2.0;
  options.sigma_high = 3.0;
  auto env = rlm::envs::make_env("kf/BestArm", {.flatten = false}, options);
  CHECK(env->reports_success());
  CHECK(env->action_space().to_string() == "Discrete(3)");
  std::vector<float> obs(1);
  env->reset(1, obs);
  CHECK(dynamic_cast<BestArm&>(*env).sigma() >= 2.0);
  options.sigma_low = 4.0;
  CHECK_THROWS(rlm::envs::make_env("kf/BestArm", {}, options));
}
