// VelocityOnlyCartPole tests (popgym@410d5aa): the id keeps upstream's "Cartpole" spelling, step obs are [x_dot,
// theta_dot] as float32, the reset obs holds [x, theta] (upstream quirk) unless reset_obs_velocities, the dynamics are
// PositionOnlyCartPole's, and the return T/L reaches 1 (balancing) and its minimum (always right).
#include <catch2/catch.hpp>
#include <limits>

#include "classic_control_policies.hpp"
#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/position_only_cartpole.hpp"
#include "envs/popgym/velocity_only_cartpole.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::PositionOnlyCartPole;
using rlm::envs::popgym::VelocityOnlyCartPole;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
constexpr float kInf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("VelocityOnlyCartpole ids follow upstream's spelling, spaces and lengths per difficulty", "[cartpole]") {
  const std::vector<std::pair<std::string, int64_t>> levels = {{"popgym/VelocityOnlyCartpoleEasy", 200},
                                                               {"popgym/VelocityOnlyCartpoleMedium", 400},
                                                               {"popgym/VelocityOnlyCartpoleHard", 600}};
  for (const auto& [id, length] : levels) {
    INFO(id);
    CHECK(canonical_env_id(gym_style_id(id)) == id);  // popgym-VelocityOnlyCartpole<Level>-v0 round-trips
    auto env = make_env(gym_style_id(id), kRaw);
    CHECK(env->id() == id);
    CHECK(env->max_episode_steps() == length);
    CHECK(env->action_space() == Space::discrete(2));
    CHECK(env->observation_space() == Space::box({-kInf, -kInf}, {kInf, kInf}));
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::box({-4.8f, -kInf, -0.41887903f, -kInf}, {4.8f, kInf, 0.41887903f, kInf}));
  }
  CHECK_THROWS_AS(canonical_env_id("popgym/VelocityOnlyCartPoleEasy"), rlm::EnvError);  // not upstream's spelling
}

TEST_CASE("VelocityOnlyCartPole reset obs holds the positions, as upstream, and steps the velocities", "[cartpole]") {
  VelocityOnlyCartPole env("popgym/VelocityOnlyCartpoleEasy", {});
  std::vector<float> obs(2);
  for (uint64_t seed = 0; seed < 50; ++seed) {
    env.reset(seed, obs);
    for (double v : env.state()) REQUIRE((v >= -0.05 && v < 0.05));
    REQUIRE(obs[0] == static_cast<float>(env.state()[0]));
    REQUIRE(obs[1] == static_cast<float>(env.state()[2]));
    for (int t = 0; t < 5; ++t) {
      env.step(std::vector<float>{static_cast<float>(t % 2)}, obs);
      REQUIRE(obs[0] == static_cast<float>(env.state()[1]));
      REQUIRE(obs[1] == static_cast<float>(env.state()[3]));
    }
  }
}

TEST_CASE("VelocityOnlyCartPole reset_obs_velocities fixes the reset obs", "[cartpole]") {
  VelocityOnlyCartPole quirk("popgym/VelocityOnlyCartpoleEasy", {});
  VelocityOnlyCartPole fixed("popgym/VelocityOnlyCartpoleEasy", {.reset_obs_velocities = true});
  std::vector<float> a(2), b(2);
  quirk.reset(9, a);
  fixed.reset(9, b);
  CHECK(quirk.state() == fixed.state());
  CHECK(b[0] == static_cast<float>(fixed.state()[1]));
  CHECK(b[1] == static_cast<float>(fixed.state()[3]));
  CHECK(a != b);
  // Only the reset obs differs.
  quirk.step(std::vector<float>{1}, a);
  fixed.step(std::vector<float>{1}, b);
  CHECK(a == b);
}

TEST_CASE("VelocityOnlyCartPole has PositionOnlyCartPole's dynamics, rewards and flags", "[cartpole]") {
  VelocityOnlyCartPole velocity("popgym/VelocityOnlyCartpoleEasy", {});
  PositionOnlyCartPole position("popgym/PositionOnlyCartPoleEasy", {});
  std::vector<float> a(2), b(2);
  for (uint64_t seed : {1ull, 2ull, 3ull}) {
    velocity.reset(seed, a);
    position.reset(seed, b);
    CHECK(a == b);  // the quirk: both observe positions at reset
    const auto policy = test::random_policy(velocity.action_space(), seed);
    for (int t = 0; t < 200; ++t) {
      const std::vector<float> action = policy({});
      const StepResult rv = velocity.step(action, a);
      const StepResult rp = position.step(action, b);
      REQUIRE(velocity.state() == position.state());
      REQUIRE(rv.reward == rp.reward);
      REQUIRE(rv.terminated == rp.terminated);
      REQUIRE(rv.truncated == rp.truncated);
      if (rv.terminated || rv.truncated) break;
    }
  }
}

TEST_CASE("VelocityOnlyCartPole return: balancing reaches exactly 1 at every level, always-right the least",
          "[cartpole]") {
  for (const char* id :
       {"popgym/VelocityOnlyCartpoleEasy", "popgym/VelocityOnlyCartpoleMedium", "popgym/VelocityOnlyCartpoleHard"}) {
    auto env = make_env(id, kRaw);
    const auto& v = dynamic_cast<const VelocityOnlyCartPole&>(*env);
    const int64_t length = env->max_episode_steps();
    INFO(id);
    const test::Episode best = test::run_episode(
        *env, 8, [&](const test::Episode&) { return test::cartpole_balance(v.state()); }, 10000);
    CHECK(best.length() == length);
    CHECK(best.truncated.back() == 1);
    CHECK(best.terminated.back() == 0);
    CHECK(best.episode_return() == Approx(1.0).margin(1e-5));
    // Pushing one way all along falls within about 10 steps: return T/L > 0, the bottom of the range (0, 1].
    const test::Episode worst = test::run_episode(
        *env, 8, [](const test::Episode&) { return std::vector<float>{1}; }, 10000);
    CHECK(worst.terminated.back() == 1);
    CHECK(worst.length() < 15);
    for (float r : worst.rewards) REQUIRE(r == static_cast<float>(1.0 / static_cast<double>(length)));
    CHECK(worst.episode_return() == Approx(static_cast<double>(worst.length()) / static_cast<double>(length)));
    CHECK(worst.episode_return() > 0);
  }
}

TEST_CASE("VelocityOnlyCartPole popgym base tests: obs and state in their spaces, seeded replay", "[cartpole]") {
  for (const char* id : {"popgym/VelocityOnlyCartpoleEasy", "popgym/VelocityOnlyCartpoleHard"}) {
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 5ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      CHECK((ep.terminated.back() || ep.truncated.back()));
      for (const auto& o : ep.obs) REQUIRE(env->observation_space().contains(o));
      const int64_t steps = test::check_states_random_episode(*env, seed);
      CHECK(steps >= 1);
    }
  }
}

TEST_CASE("VelocityOnlyCartPole rejects invalid actions", "[cartpole]") {
  auto env = make_env("popgym/VelocityOnlyCartpoleMedium", kRaw);
  std::vector<float> obs(2);
  CHECK_THROWS_AS(env->step(std::vector<float>{1}, obs), rlm::EnvError);  // before reset
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{2}, obs),
                    "popgym-VelocityOnlyCartpoleMedium-v0: invalid action 2 for action space Discrete(2)");
  CHECK_THROWS_AS(env->step(std::vector<float>{0.5f}, obs), rlm::EnvError);
  CHECK_THROWS_AS(VelocityOnlyCartPole("x/Bad", {.max_episode_length = 0}), rlm::EnvError);
}
