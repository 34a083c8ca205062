// PositionOnlyCartPole tests (popgym@410d5aa): gymnasium's float64 Euler step checked against a hand computation, obs
// [x, theta] as float32, reward 1/L on every step including the terminating one, truncation at L, and the state
// (get_state: the 4-state as float32). Golden replays: test_golden_position_only_cart_pole.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/position_only_cartpole.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::PositionOnlyCartPole;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};

/// One gymnasium CartPole Euler step, written out from gymnasium's classic_control/cartpole.py.
std::array<double, 4> euler_step(std::array<double, 4> s, int action) {
  const double x = s[0], x_dot = s[1], theta = s[2], theta_dot = s[3];
  const double force = action == 1 ? 10.0 : -10.0;
  const double temp = (force + 0.05 * (theta_dot * theta_dot) * std::sin(theta)) / 1.1;
  const double theta_acc = (9.8 * std::sin(theta) - std::cos(theta) * temp) /
                           (0.5 * (4.0 / 3.0 - 0.1 * (std::cos(theta) * std::cos(theta)) / 1.1));
  const double x_acc = temp - 0.05 * theta_acc * std::cos(theta) / 1.1;
  return {x + 0.02 * x_dot, x_dot + 0.02 * x_acc, theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc};
}

/// A linear state-feedback controller that reads the hidden full state: balances for well over 600 steps.
int balancing_action(const PositionOnlyCartPole& env) {
  const auto& s = env.state();
  return 0.5 * s[0] + 1.0 * s[1] + 10.0 * s[2] + 2.0 * s[3] > 0 ? 1 : 0;
}

}  // namespace

TEST_CASE("PositionOnlyCartPole spaces and lengths per difficulty", "[cartpole]") {
  const std::vector<std::pair<std::string, int64_t>> levels = {{"popgym/PositionOnlyCartPoleEasy", 200},
                                                               {"popgym/PositionOnlyCartPoleMedium", 400},
                                                               {"popgym/PositionOnlyCartPoleHard", 600}};
  for (const auto& [id, length] : levels) {
    auto env = make_env(id, kRaw);
    CHECK(env->max_episode_steps() == length);
    CHECK(env->action_space() == Space::discrete(2));
    const Space& obs = env->observation_space();
    REQUIRE(obs.kind == Space::Kind::Box);
    CHECK(obs.high == std::vector<float>{4.8f, 0.41887903f});
    CHECK(obs.low == std::vector<float>{-4.8f, -0.41887903f});
  }
}

TEST_CASE("PositionOnlyCartPole reset draws each state component uniformly within plus or minus 0.05", "[cartpole]") {
  PositionOnlyCartPole env("popgym/PositionOnlyCartPoleEasy", {});
  std::vector<float> obs(2);
  for (uint64_t seed = 0; seed < 200; ++seed) {
    env.reset(seed, obs);
    for (double v : env.state()) REQUIRE((v >= -0.05 && v < 0.05));
    REQUIRE(obs[0] == static_cast<float>(env.state()[0]));
    REQUIRE(obs[1] == static_cast<float>(env.state()[2]));
  }
}

TEST_CASE("PositionOnlyCartPole dynamics equal a hand-computed float64 Euler step", "[cartpole]") {
  PositionOnlyCartPole env("popgym/PositionOnlyCartPoleEasy", {});
  std::vector<float> obs(2);
  env.reset(17, obs);
  const int actions[] = {1, 1, 0, 1, 0, 0, 0, 1, 1, 1};
  for (int a : actions) {
    const std::array<double, 4> want = euler_step(env.state(), a);
    env.step(std::vector<float>{static_cast<float>(a)}, obs);
    for (size_t i = 0; i < 4; ++i) REQUIRE(env.state()[i] == Approx(want[i]).epsilon(1e-14).margin(1e-15));
    REQUIRE(obs[0] == static_cast<float>(env.state()[0]));
    REQUIRE(obs[1] == static_cast<float>(env.state()[2]));
  }
}

TEST_CASE("PositionOnlyCartPole always-right terminates early with return T/L < 1", "[cartpole]") {
  auto env = make_env("popgym/PositionOnlyCartPoleEasy", kRaw);
  const test::Episode ep = test::run_episode(
      *env, 4, [](const test::Episode&) { return std::vector<float>{1}; }, 1000);
  CHECK(ep.length() < 200);
  CHECK(ep.length() > 5);
  CHECK(ep.terminated.back() == 1);
  CHECK(ep.truncated.back() == 0);
  for (float r : ep.rewards) REQUIRE(r == 1.0f / 200.0f);  // also on the terminating step
  CHECK(ep.episode_return() == Approx(static_cast<double>(ep.length()) / 200.0));
  CHECK(ep.episode_return() < 1.0);
  // The pole fell to the left of the threshold by less than one step's motion: obs stays inside the Box.
  for (const auto& o : ep.obs) REQUIRE(env->observation_space().contains(o));
}

TEST_CASE("PositionOnlyCartPole balancing policy is truncated exactly at L with return 1", "[cartpole]") {
  for (int length : {200, 400, 600}) {
    PositionOnlyCartPole env("popgym/PositionOnlyCartPoleEasy", {.max_episode_length = length});
    const test::Episode ep = test::run_episode(
        env, 8, [&](const test::Episode&) { return std::vector<float>{static_cast<float>(balancing_action(env))}; },
        10000);
    INFO("L " << length);
    CHECK(ep.length() == length);
    CHECK(ep.truncated.back() == 1);
    CHECK(ep.terminated.back() == 0);
    for (int64_t t = 0; t + 1 < ep.length(); ++t) REQUIRE(ep.truncated[static_cast<size_t>(t)] == 0);
    CHECK(ep.episode_return() == Approx(1.0).margin(1e-5));
  }
}

TEST_CASE("PositionOnlyCartPole steps after termination pay -1, as upstream", "[cartpole]") {
  PositionOnlyCartPole env("popgym/PositionOnlyCartPoleEasy", {});
  std::vector<float> obs(2);
  env.reset(4, obs);
  StepResult r;
  while (!(r = env.step(std::vector<float>{1}, obs)).terminated) REQUIRE(r.reward == 1.0f / 200.0f);
  CHECK(r.reward == 1.0f / 200.0f);  // the step that falls still pays
  CHECK(env.step(std::vector<float>{1}, obs).reward == -1.0f);
}

TEST_CASE("PositionOnlyCartPole rejects invalid actions", "[cartpole]") {
  auto env = make_env("popgym/PositionOnlyCartPoleMedium", kRaw);
  std::vector<float> obs(2);
  CHECK_THROWS_AS(env->step(std::vector<float>{1}, obs), rlm::EnvError);  // before reset
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{2}, obs),
                    "popgym-PositionOnlyCartPoleMedium-v0: invalid action 2 for action space Discrete(2)");
  CHECK_THROWS_AS(PositionOnlyCartPole("x/Bad", {.max_episode_length = 0}), rlm::EnvError);
}

TEST_CASE("PositionOnlyCartPole state is gymnasium's 4-state as float32 in CartPole's Box", "[cartpole]") {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (const char* id : {"popgym/PositionOnlyCartPoleEasy", "popgym/PositionOnlyCartPoleHard"}) {
    auto env = make_env(id, kRaw);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::box({-4.8f, -kInf, -0.41887903f, -kInf}, {4.8f, kInf, 0.41887903f, kInf}));
    const auto& e = dynamic_cast<const PositionOnlyCartPole&>(*env);
    std::vector<float> obs(2), state(4);
    env->reset(3, obs);
    env->write_state(state);
    for (size_t i = 0; i < 4; ++i) CHECK(state[i] == static_cast<float>(e.state()[i]));
    // popgym base tests (test_spaces, test_np_random) for the state.
    for (uint64_t seed : {0ull, 5ull}) CHECK(test::check_states_random_episode(*env, seed) >= 1);
  }
}

TEST_CASE("PositionOnlyCartPole restore_golden starts from the given state", "[cartpole]") {
  PositionOnlyCartPole env("popgym/PositionOnlyCartPoleEasy", {});
  std::vector<float> obs(2);
  env.restore_golden({{"state", {0.01, -0.02, 0.03, -0.04}}}, obs);
  CHECK(env.state() == std::array<double, 4>{0.01, -0.02, 0.03, -0.04});
  CHECK(env.steps() == 0);
  CHECK(obs == std::vector<float>{0.01f, 0.03f});
  const std::array<double, 4> want = euler_step(env.state(), 1);
  env.step(std::vector<float>{1}, obs);
  for (size_t i = 0; i < 4; ++i) CHECK(env.state()[i] == Approx(want[i]).epsilon(1e-14).margin(1e-15));
}
