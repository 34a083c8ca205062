// NoisyPositionOnlyPendulum tests (popgym@410d5aa): L = 200 at every level, obs = clip([cos, sin] + noise, -1, 1)
// with fresh N(0, sigma^2) noise at reset and every step (a statistical test of its distribution, since the C++ RNG
// does not reproduce numpy's), injected noise used exactly, rewards and state from the true pendulum, and the return
// range [-1, 1] reached as far as a policy can.
#include <catch2/catch.hpp>
#include <cmath>

#include "classic_control_policies.hpp"
#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/noisy_position_only_pendulum.hpp"
#include "envs/popgym/position_only_pendulum.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::NoisyPositionOnlyPendulum;
using rlm::envs::popgym::PositionOnlyPendulum;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
const char* const kIds[] = {"popgym/NoisyPositionOnlyPendulumEasy", "popgym/NoisyPositionOnlyPendulumMedium",
                            "popgym/NoisyPositionOnlyPendulumHard"};
}  // namespace

TEST_CASE("NoisyPositionOnlyPendulum spaces, sigma and length per difficulty", "[pendulum]") {
  const double sigmas[] = {0.1, 0.2, 0.3};
  for (size_t level = 0; level < 3; ++level) {
    auto env = make_env(kIds[level], kRaw);
    INFO(kIds[level]);
    CHECK(env->max_episode_steps() == 200);  // upstream's difficulty classes pass only sigma
    CHECK(dynamic_cast<const NoisyPositionOnlyPendulum&>(*env).noise_sigma() == sigmas[level]);
    CHECK(env->observation_space() == Space::box({-1, -1}, {1, 1}));
    CHECK(env->action_space() == Space::box({-2}, {2}));
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::box({-1, -1, -8}, {1, 1, 8}));
    const test::Episode ep = test::run_episode(*env, 1, test::random_policy(env->action_space(), 2), 10000);
    CHECK(ep.length() == 200);
    CHECK(ep.truncated.back() == 1);
    for (uint8_t t : ep.terminated) REQUIRE(t == 0);
  }
}

TEST_CASE("NoisyPositionOnlyPendulum noise is N(0, sigma^2), independent per step", "[pendulum]") {
  // Residuals obs - float32(true cos/sin), only where the true value lies 5 sigma inside [-1, 1], so that clipping
  // cannot distort them.
  for (double sigma : {0.05, 0.1, 0.15}) {
    NoisyPositionOnlyPendulum env("popgym/NoisyPositionOnlyPendulumEasy", {.noise_sigma = sigma});
    std::vector<float> obs(2), state(3);
    std::vector<double> noise;
    const auto policy = test::random_policy(env.action_space(), 77);
    auto collect = [&] {
      env.write_state(state);
      for (size_t i = 0; i < 2; ++i)
        if (std::abs(state[i]) < 1 - 5 * sigma) noise.push_back(obs[i] - state[i]);
    };
    for (uint64_t seed = 0; noise.size() < 40000 && seed < 2000; ++seed) {
      env.reset(seed, obs);
      collect();
      for (int t = 0; t < 200; ++t) {
        env.step(policy({}), obs);
        collect();
      }
    }
    INFO("sigma " << sigma);
    const double n = static_cast<double>(noise.size());
    REQUIRE(n >= 40000);
    double mean = 0, var = 0, within_one = 0;
    for (double v : noise) mean += v / n;
    for (double v : noise) {
      var += (v - mean) * (v - mean) / n;
      within_one += std::abs(v) < sigma ? 1.0 / n : 0.0;
    }
    CHECK(std::abs(mean) < 5 * sigma / std::sqrt(n));
    CHECK(std::sqrt(var) == Approx(sigma).epsilon(0.02));
    CHECK(within_one == Approx(0.682689).margin(0.015));  // a Gaussian, not e.g. a uniform (0.577)
  }
}

TEST_CASE("NoisyPositionOnlyPendulum uses injected noise exactly and clips to (-1, 1)", "[pendulum]") {
  NoisyPositionOnlyPendulum env("popgym/NoisyPositionOnlyPendulumMedium", {.noise_sigma = 0.2});
  std::vector<float> obs(2), state(3);
  env.restore_golden({{"state", {0.5, 0.25}}, {"noise", {0.0625, -0.03125}}}, obs);
  CHECK(obs[0] == static_cast<float>(std::cos(0.5)) + 0.0625f);
  CHECK(obs[1] == static_cast<float>(std::sin(0.5)) - 0.03125f);
  env.inject_draws(std::vector<double>{3.0, -3.0});
  env.step(std::vector<float>{0}, obs);
  CHECK(obs == std::vector<float>{1, -1});
  env.write_state(state);  // the state stays noise-free
  CHECK(state[0] == static_cast<float>(std::cos(env.theta())));
  CHECK(state[1] == static_cast<float>(std::sin(env.theta())));
  env.inject_draws(std::vector<double>{-0.1, 0.1});
  env.step(std::vector<float>{0}, obs);
  CHECK(obs[0] == std::clamp(static_cast<float>(std::cos(env.theta())) - 0.1f, -1.0f, 1.0f));
  CHECK(obs[1] == std::clamp(static_cast<float>(std::sin(env.theta())) + 0.1f, -1.0f, 1.0f));
  CHECK_THROWS_AS(env.inject_draws(std::vector<double>{}), rlm::EnvError);
}

TEST_CASE("NoisyPositionOnlyPendulum rewards, flags and state are PositionOnlyPendulum's", "[pendulum]") {
  NoisyPositionOnlyPendulum noisy("popgym/NoisyPositionOnlyPendulumHard", {.noise_sigma = 0.3});
  PositionOnlyPendulum clean("popgym/PositionOnlyPendulumEasy", {});
  std::vector<float> a(2), b(2), sa(3), sb(3);
  for (double theta : {-2.0, 0.1, 3.0}) {
    noisy.restore_golden({{"state", {theta, 0.5}}, {"noise", {0.1, -0.2}}}, a);
    clean.restore_golden({{"state", {theta, 0.5}}}, b);
    const auto policy = test::random_policy(noisy.action_space(), static_cast<uint64_t>(theta * 10 + 100));
    for (int t = 0; t < 200; ++t) {
      const std::vector<float> action = policy({});
      const StepResult rn = noisy.step(action, a);
      const StepResult rc = clean.step(action, b);
      REQUIRE(rn.reward == rc.reward);
      REQUIRE(rn.terminated == rc.terminated);
      REQUIRE(rn.truncated == rc.truncated);
      noisy.write_state(sa);
      clean.write_state(sb);
      REQUIRE(sa == sb);
    }
  }
}

TEST_CASE("NoisyPositionOnlyPendulum reset noise is seeded: same seed same obs, new seed new noise", "[pendulum]") {
  auto env = make_env("popgym/NoisyPositionOnlyPendulumEasy", kRaw);
  auto other = make_env("popgym/NoisyPositionOnlyPendulumEasy", kRaw);
  std::vector<float> a(2), b(2);
  env->reset(42, a);
  other->reset(42, b);
  CHECK(a == b);
  const auto& e = dynamic_cast<const NoisyPositionOnlyPendulum&>(*env);
  CHECK(a[0] != static_cast<float>(std::cos(e.theta())));  // the reset obs is noisy too
  env->reset(43, b);
  CHECK(a != b);
}

TEST_CASE("NoisyPositionOnlyPendulum return: near 1 by swinging up on the true state, low hanging", "[pendulum]") {
  for (const char* id : kIds) {
    auto env = make_env(id, kRaw);
    auto& p = dynamic_cast<NoisyPositionOnlyPendulum&>(*env);
    INFO(id);
    double total = 0;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      const double ret =
          test::run_episode(
              *env, seed, [&](const test::Episode&) { return test::pendulum_swing_up(p.theta(), p.theta_dot()); },
              10000)
              .episode_return();
      REQUIRE((ret >= -1 && ret <= 1));
      total += ret / 20;
    }
    CHECK(total > 0.85);  // the noise does not touch the state the controller reads
    std::vector<float> obs(2);
    p.restore_golden({{"state", {0.0, 0.0}}, {"noise", {0.0, 0.0}}}, obs);
    double upright = 0;
    for (int t = 0; t < 200; ++t) upright += env->step(std::vector<float>{0}, obs).reward;
    CHECK(upright == Approx(1.0).margin(1e-5));  // the top of the range, exactly
    for (uint64_t seed = 0; seed < 5; ++seed) {
      const double ret =
          test::run_episode(
              *env, seed, [&](const test::Episode&) { return test::pendulum_hold_down(p.theta(), p.theta_dot()); },
              10000)
              .episode_return();
      CHECK((ret >= -1 && ret < 0.25));  // from a random start the pole needs a while to come down
    }
  }
}

TEST_CASE("NoisyPositionOnlyPendulum popgym base tests: obs and state in their spaces, seeded replay", "[pendulum]") {
  for (const char* id : kIds) {
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 5ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      for (const auto& o : ep.obs) REQUIRE(env->observation_space().contains(o));
      CHECK(test::check_states_random_episode(*env, seed) == 200);
    }
  }
}

TEST_CASE("NoisyPositionOnlyPendulum rejects invalid actions and configs", "[pendulum]") {
  auto env = make_env("popgym/NoisyPositionOnlyPendulumHard", kRaw);
  std::vector<float> obs(2);
  CHECK_THROWS_AS(env->step(std::vector<float>{0}, obs), rlm::EnvError);  // before reset
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0, 0}, obs),
                    "popgym-NoisyPositionOnlyPendulumHard-v0: invalid action [0, 0] for action space Box(1)");
  CHECK_THROWS_AS(env->step(std::vector<float>{std::nanf("")}, obs), rlm::EnvError);
  CHECK_THROWS_AS(NoisyPositionOnlyPendulum("x/Bad", {.noise_sigma = std::nan("")}), rlm::EnvError);
  CHECK_THROWS_AS(NoisyPositionOnlyPendulum("x/Bad", {.noise_sigma = 0.1, .max_episode_length = 0}), rlm::EnvError);
}
