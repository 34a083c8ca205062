// NoisyPositionOnlyCartPole tests (popgym@410d5aa): L = 200 at every level, obs = clip([x, theta] + noise) with fresh
// N(0, sigma^2) noise at reset and every step (a statistical test of its distribution, since the C++ RNG does not
// reproduce numpy's), injected noise used exactly, rewards and termination from the true state, and the return range
// (0, 1] reached by scripted policies.
#include <catch2/catch.hpp>
#include <cmath>

#include "classic_control_policies.hpp"
#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/noisy_position_only_cartpole.hpp"
#include "envs/popgym/position_only_cartpole.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::NoisyPositionOnlyCartPole;
using rlm::envs::popgym::PositionOnlyCartPole;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
const char* const kIds[] = {"popgym/NoisyPositionOnlyCartPoleEasy", "popgym/NoisyPositionOnlyCartPoleMedium",
                            "popgym/NoisyPositionOnlyCartPoleHard"};
}  // namespace

TEST_CASE("NoisyPositionOnlyCartPole spaces, sigma and length per difficulty", "[cartpole]") {
  const double sigmas[] = {0.1, 0.2, 0.3};
  for (size_t level = 0; level < 3; ++level) {
    auto env = make_env(kIds[level], kRaw);
    INFO(kIds[level]);
    CHECK(env->max_episode_steps() == 200);  // upstream's difficulty classes pass only sigma
    CHECK(dynamic_cast<const NoisyPositionOnlyCartPole&>(*env).noise_sigma() == sigmas[level]);
    CHECK(env->action_space() == Space::discrete(2));
    CHECK(env->observation_space() == Space::box({-4.8f, -0.41887903f}, {4.8f, 0.41887903f}));
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == *make_env("popgym/PositionOnlyCartPoleEasy", kRaw)->state_space());
  }
}

TEST_CASE("NoisyPositionOnlyCartPole noise is N(0, sigma^2), independent per component and step", "[cartpole]") {
  // Residuals obs - float32(true position) under a balancing policy. x never comes near its bound (4.8), so nothing
  // clips it; theta's bound (0.41887903) is within reach of the noise, so theta is tested only at a small sigma and
  // only where its true value lies 5 sigma inside.
  for (double sigma : {0.05, 0.1, 0.2, 0.3}) {
    NoisyPositionOnlyCartPole env("popgym/NoisyPositionOnlyCartPoleEasy", {.noise_sigma = sigma});
    std::vector<float> obs(2);
    std::vector<double> x_noise, theta_noise;
    const bool test_theta = 0.41887903 - 5 * sigma > 0.1;
    for (uint64_t seed = 0; x_noise.size() < 40000; ++seed) {
      env.reset(seed, obs);
      x_noise.push_back(obs[0] - static_cast<float>(env.state()[0]));
      for (int t = 0; t < 200; ++t) {
        const StepResult r = env.step(test::cartpole_balance(env.state()), obs);
        x_noise.push_back(obs[0] - static_cast<float>(env.state()[0]));
        if (test_theta && std::abs(env.state()[2]) < 0.41887903 - 5 * sigma)
          theta_noise.push_back(obs[1] - static_cast<float>(env.state()[2]));
        if (r.terminated || r.truncated) break;
      }
    }
    INFO("sigma " << sigma);
    std::vector<const std::vector<double>*> all = {&x_noise};
    if (test_theta) all.push_back(&theta_noise);
    for (const auto* samples : all) {
      const double n = static_cast<double>(samples->size());
      REQUIRE(n > 20000);
      double mean = 0, var = 0, within_one = 0, lag_product = 0;
      for (double v : *samples) mean += v / n;
      for (size_t i = 0; i < samples->size(); ++i) {
        const double d = (*samples)[i] - mean;
        var += d * d / n;
        within_one += std::abs((*samples)[i]) < sigma ? 1.0 / n : 0.0;
        if (i > 0) lag_product += ((*samples)[i - 1] - mean) * d / (n - 1);
      }
      CHECK(std::abs(mean) < 5 * sigma / std::sqrt(n));
      CHECK(std::sqrt(var) == Approx(sigma).epsilon(0.02));   // standard error ~0.4% of sigma
      CHECK(within_one == Approx(0.682689).margin(0.015));    // a Gaussian, not e.g. a uniform (0.577)
      CHECK(std::abs(lag_product / var) < 5 / std::sqrt(n));  // consecutive draws uncorrelated
    }
  }
}

TEST_CASE("NoisyPositionOnlyCartPole uses injected noise exactly and clips to the Box", "[cartpole]") {
  NoisyPositionOnlyCartPole env("popgym/NoisyPositionOnlyCartPoleHard", {.noise_sigma = 0.3});
  std::vector<float> obs(2);
  const nlohmann::json start = {{"state", {0.01, -0.02, 0.03, 0.04}}, {"noise", {0.25, -0.125}}};
  env.restore_golden(start, obs);
  CHECK(obs[0] == static_cast<float>(0.01) + 0.25f);
  CHECK(obs[1] == static_cast<float>(0.03) + -0.125f);
  const std::vector<double> big = {10.0, -1.0};
  env.inject_draws(big);
  const StepResult r = env.step(std::vector<float>{1}, obs);
  CHECK(obs[0] == 4.8f);  // clipped to the Box
  CHECK(obs[1] == -0.41887903f);
  CHECK_FALSE(r.terminated);  // termination uses the true state, not the noisy obs
  CHECK(r.reward == 1.0f / 200.0f);
  // Without an injection the RNG draws again: the next obs is not clipped.
  env.step(std::vector<float>{0}, obs);
  CHECK(std::abs(obs[0]) < 4.8f);
  CHECK_THROWS_AS(env.inject_draws(std::vector<double>{0.1}), rlm::EnvError);
  CHECK_THROWS_AS(env.restore_golden({{"state", {0, 0, 0, 0}}, {"noise", {0.1, 0.2, 0.3}}}, obs), rlm::EnvError);
}

TEST_CASE("NoisyPositionOnlyCartPole rewards, flags and state are PositionOnlyCartPole's", "[cartpole]") {
  NoisyPositionOnlyCartPole noisy("popgym/NoisyPositionOnlyCartPoleMedium", {.noise_sigma = 0.2});
  PositionOnlyCartPole clean("popgym/PositionOnlyCartPoleEasy", {});
  std::vector<float> a(2), b(2), sa(4), sb(4);
  for (double x0 : {-0.04, 0.0, 0.03}) {
    const nlohmann::json start = {{"state", {x0, 0.01, -0.02, 0.005}}, {"noise", {0.1, 0.1}}};
    noisy.restore_golden(start, a);
    clean.restore_golden(start, b);
    const auto policy = test::random_policy(noisy.action_space(), static_cast<uint64_t>(x0 * 1000 + 100));
    for (int t = 0; t < 300; ++t) {
      const std::vector<float> action = policy({});
      const StepResult rn = noisy.step(action, a);
      const StepResult rc = clean.step(action, b);
      REQUIRE(rn.reward == rc.reward);
      REQUIRE(rn.terminated == rc.terminated);
      REQUIRE(rn.truncated == rc.truncated);
      noisy.write_state(sa);
      clean.write_state(sb);
      REQUIRE(sa == sb);
      if (rn.terminated || rn.truncated) break;
    }
  }
}

TEST_CASE("NoisyPositionOnlyCartPole reset noise is seeded: same seed same obs, new seed new noise", "[cartpole]") {
  auto env = make_env("popgym/NoisyPositionOnlyCartPoleEasy", kRaw);
  auto other = make_env("popgym/NoisyPositionOnlyCartPoleEasy", kRaw);
  std::vector<float> a(2), b(2);
  env->reset(42, a);
  other->reset(42, b);
  CHECK(a == b);
  const auto& e = dynamic_cast<const NoisyPositionOnlyCartPole&>(*env);
  CHECK(a[0] != static_cast<float>(e.state()[0]));  // the reset obs is noisy too
  env->reset(43, b);
  CHECK(a != b);
}

TEST_CASE("NoisyPositionOnlyCartPole return: balancing reaches exactly 1, always-right the least", "[cartpole]") {
  for (const char* id : kIds) {
    auto env = make_env(id, kRaw);
    const auto& e = dynamic_cast<const NoisyPositionOnlyCartPole&>(*env);
    INFO(id);
    const test::Episode best = test::run_episode(
        *env, 3, [&](const test::Episode&) { return test::cartpole_balance(e.state()); }, 10000);
    CHECK(best.length() == 200);
    CHECK(best.truncated.back() == 1);
    CHECK(best.terminated.back() == 0);
    CHECK(best.episode_return() == Approx(1.0).margin(1e-5));
    const test::Episode worst = test::run_episode(
        *env, 3, [](const test::Episode&) { return std::vector<float>{0}; }, 10000);
    CHECK(worst.terminated.back() == 1);
    CHECK(worst.length() < 15);
    CHECK(worst.episode_return() == Approx(static_cast<double>(worst.length()) / 200.0));
    CHECK(worst.episode_return() > 0);
  }
}

TEST_CASE("NoisyPositionOnlyCartPole popgym base tests: obs and state in their spaces, seeded replay", "[cartpole]") {
  for (const char* id : kIds) {
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 5ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      CHECK((ep.terminated.back() || ep.truncated.back()));
      for (const auto& o : ep.obs) REQUIRE(env->observation_space().contains(o));
      CHECK(test::check_states_random_episode(*env, seed) >= 1);
    }
  }
}

TEST_CASE("NoisyPositionOnlyCartPole rejects invalid actions and configs", "[cartpole]") {
  auto env = make_env("popgym/NoisyPositionOnlyCartPoleEasy", kRaw);
  std::vector<float> obs(2);
  CHECK_THROWS_AS(env->step(std::vector<float>{1}, obs), rlm::EnvError);  // before reset
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{-1}, obs),
                    "popgym-NoisyPositionOnlyCartPoleEasy-v0: invalid action -1 for action space Discrete(2)");
  CHECK_THROWS_AS(NoisyPositionOnlyCartPole("x/Bad", {.noise_sigma = -0.1}), rlm::EnvError);
  CHECK_THROWS_AS(NoisyPositionOnlyCartPole("x/Bad", {.noise_sigma = 0.1, .max_episode_length = 0}), rlm::EnvError);
}
