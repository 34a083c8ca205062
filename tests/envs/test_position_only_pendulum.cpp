// PositionOnlyPendulum tests (popgym@410d5aa): spaces and lengths per level, gymnasium's semi-implicit Euler step
// against a hand computation, numpy's floor-mod angle_normalize, the reward's affine map onto [-1/L, 1/L], torque
// clipping, no termination, and the return range [-1, 1]: exactly 1 from upright, near 1 by swinging up.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "classic_control_policies.hpp"
#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/position_only_pendulum.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::PendulumSim;
using rlm::envs::popgym::PositionOnlyPendulum;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
const char* const kIds[] = {"popgym/PositionOnlyPendulumEasy", "popgym/PositionOnlyPendulumMedium",
                            "popgym/PositionOnlyPendulumHard"};
constexpr double kPi = 3.14159265358979323846;
constexpr double kHalf = 8.1368022;  // popgym's (high - low) / 2

nlohmann::json at(double theta, double theta_dot) { return {{"state", {theta, theta_dot}}}; }

/// The per-step reward popgym gives for a gymnasium cost (popgym/envs/position_only_pendulum.py).
double reward_for_cost(double cost, int length) { return ((-cost + kHalf) / kHalf) / length; }

}  // namespace

TEST_CASE("PositionOnlyPendulum spaces and lengths per difficulty", "[pendulum]") {
  const int64_t lengths[] = {200, 150, 100};  // shorter is harder
  for (size_t level = 0; level < 3; ++level) {
    auto env = make_env(kIds[level], kRaw);
    INFO(kIds[level]);
    CHECK(env->max_episode_steps() == lengths[level]);
    CHECK(env->observation_space() == Space::box({-1, -1}, {1, 1}));
    CHECK(env->action_space() == Space::box({-2}, {2}));
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::box({-1, -1, -8}, {1, 1, 8}));
    // Never terminated; truncated exactly at L.
    const test::Episode ep = test::run_episode(*env, 1, test::random_policy(env->action_space(), 2), 10000);
    CHECK(ep.length() == lengths[level]);
    CHECK(ep.truncated.back() == 1);
    for (uint8_t t : ep.terminated) REQUIRE(t == 0);
  }
}

TEST_CASE("PositionOnlyPendulum reset draws theta in (-pi, pi) and theta_dot in (-1, 1)", "[pendulum]") {
  PositionOnlyPendulum env("popgym/PositionOnlyPendulumEasy", {});
  std::vector<float> obs(2), state(3);
  double min_theta = 10, max_theta = -10;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    env.reset(seed, obs);
    REQUIRE((env.theta() >= -kPi && env.theta() < kPi));
    REQUIRE((env.theta_dot() >= -1 && env.theta_dot() < 1));
    min_theta = std::min(min_theta, env.theta());
    max_theta = std::max(max_theta, env.theta());
    REQUIRE(obs[0] == static_cast<float>(std::cos(env.theta())));
    REQUIRE(obs[1] == static_cast<float>(std::sin(env.theta())));
    env.write_state(state);
    REQUIRE(state == std::vector<float>{obs[0], obs[1], static_cast<float>(env.theta_dot())});
  }
  CHECK(min_theta < -3.0);  // the whole circle, not upstream's pre-gymnasium [-pi/2, pi/2) or the like
  CHECK(max_theta > 3.0);
}

TEST_CASE("PositionOnlyPendulum dynamics equal a hand-computed semi-implicit Euler step", "[pendulum]") {
  PositionOnlyPendulum env("popgym/PositionOnlyPendulumEasy", {});
  std::vector<float> obs(2);
  env.reset(17, obs);
  const float torques[] = {1.5f, -0.25f, 2.0f, -2.0f, 0.0f, 0.7f, -1.9f, 1.0f};
  for (float u : torques) {
    const double th = env.theta(), thdot = env.theta_dot();
    const double want_thdot = std::clamp(thdot + (15.0 * std::sin(th) + 3.0 * u) * 0.05, -8.0, 8.0);
    const double want_th = th + want_thdot * 0.05;
    const double norm = PendulumSim::angle_normalize(th);
    const double cost = norm * norm + 0.1 * thdot * thdot + 0.001 * u * u;
    const StepResult r = env.step(std::vector<float>{u}, obs);
    REQUIRE(env.theta_dot() == Approx(want_thdot).margin(1e-7));  // 3u is rounded to float32, as numpy does
    REQUIRE(env.theta() == Approx(want_th).margin(1e-8));
    REQUIRE(r.reward == Approx(reward_for_cost(cost, 200)).margin(1e-8));
    REQUIRE(obs[0] == static_cast<float>(std::cos(env.theta())));
    REQUIRE(obs[1] == static_cast<float>(std::sin(env.theta())));
  }
}

TEST_CASE("PositionOnlyPendulum angle_normalize is numpy's floor-mod", "[pendulum]") {
  // Values from numpy: ((x + np.pi) % (2 * np.pi)) - np.pi.
  CHECK(PendulumSim::angle_normalize(-3.5) == 2.7831853071795862);
  CHECK(PendulumSim::angle_normalize(10.0) == -2.5663706143591725);
  CHECK(PendulumSim::angle_normalize(-10.0) == 2.5663706143591725);
  CHECK(PendulumSim::angle_normalize(-kPi) == -kPi);
  CHECK(PendulumSim::angle_normalize(kPi) == -kPi);
  CHECK(PendulumSim::angle_normalize(3 * kPi) == -kPi);
  CHECK(PendulumSim::angle_normalize(100.25) == -0.28096491487337616);
}

TEST_CASE("PositionOnlyPendulum reward maps the cost range onto (-1/L, 1/L)", "[pendulum]") {
  for (int length : {200, 150, 100}) {
    PositionOnlyPendulum env("popgym/PositionOnlyPendulumEasy", {.max_episode_length = length});
    std::vector<float> obs(2);
    INFO("L " << length);
    env.restore_golden(at(0, 0), obs);  // upright at rest, no torque: cost 0
    CHECK(env.step(std::vector<float>{0}, obs).reward == static_cast<float>(1.0 / length));
    env.restore_golden(at(kPi, 0), obs);  // hanging: cost pi^2 (+ 0.001 u^2)
    CHECK(env.step(std::vector<float>{2}, obs).reward ==
          Approx(reward_for_cost(kPi * kPi + 0.004, length)).margin(1e-7));
    // The largest cost gymnasium can charge: upside down at full speed with full torque.
    env.restore_golden(at(kPi, 8), obs);
    CHECK(env.step(std::vector<float>{-2}, obs).reward == Approx(-1.0 / length).margin(1e-7));
    // Random episodes stay inside.
    const test::Episode ep = test::run_episode(env, 4, test::random_policy(env.action_space(), 5), 1000);
    for (float r : ep.rewards) REQUIRE((r >= -1.0f / length - 1e-7f && r <= 1.0f / length + 1e-7f));
  }
}

TEST_CASE("PositionOnlyPendulum clips the torque to (-2, 2) and the speed to (-8, 8)", "[pendulum]") {
  PositionOnlyPendulum a("popgym/PositionOnlyPendulumEasy", {});
  PositionOnlyPendulum b("popgym/PositionOnlyPendulumEasy", {});
  std::vector<float> oa(2), ob(2);
  for (float big : {5.0f, 1e9f, std::numeric_limits<float>::infinity()}) {
    a.restore_golden(at(0.3, -0.2), oa);
    b.restore_golden(at(0.3, -0.2), ob);
    CHECK(a.step(std::vector<float>{big}, oa).reward == b.step(std::vector<float>{2}, ob).reward);
    CHECK(oa == ob);
    CHECK(a.step(std::vector<float>{-big}, oa).reward == b.step(std::vector<float>{-2}, ob).reward);
    CHECK(oa == ob);
  }
  a.restore_golden(at(kPi / 2, 7.99), oa);  // gravity and torque both accelerate past 8
  a.step(std::vector<float>{2}, oa);
  CHECK(a.theta_dot() == 8.0);
  CHECK(a.theta() == kPi / 2 + 8.0 * 0.05);
}

TEST_CASE("PositionOnlyPendulum return: exactly 1 from upright, near 1 by swinging up, low hanging", "[pendulum]") {
  const double mean_at_least[] = {0.85, 0.8, 0.7};  // less time to swing up at shorter L
  for (size_t level = 0; level < 3; ++level) {
    auto env = make_env(kIds[level], kRaw);
    auto& p = dynamic_cast<PositionOnlyPendulum&>(*env);
    const auto swing_up = [&](const test::Episode&) { return test::pendulum_swing_up(p.theta(), p.theta_dot()); };
    const auto hold_down = [&](const test::Episode&) { return test::pendulum_hold_down(p.theta(), p.theta_dot()); };
    INFO(kIds[level]);
    double total = 0, best = -1;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      const double ret = test::run_episode(*env, seed, swing_up, 10000).episode_return();
      REQUIRE((ret >= -1 && ret <= 1));
      total += ret / 20;
      best = std::max(best, ret);
    }
    CHECK(total > mean_at_least[level]);
    CHECK(best > 0.99);
    // The top of the range: balancing from upright at rest costs nothing, every step pays 1/L.
    std::vector<float> obs(2);
    p.restore_golden(at(0, 0), obs);
    double upright = 0;
    for (int64_t t = 0; t < env->max_episode_steps(); ++t) upright += env->step(swing_up({}), obs).reward;
    CHECK(upright == Approx(1.0).margin(1e-5));
    // Hanging still is the costliest state a policy can hold: about (8.1368 - pi^2) / 8.1368 = -0.213 per episode.
    // -1 would need the largest cost (upside down at full speed) on every step, which the dynamics cannot sustain.
    p.restore_golden(at(kPi, 0), obs);
    double hanging = 0;
    for (int64_t t = 0; t < env->max_episode_steps(); ++t) hanging += env->step(hold_down({}), obs).reward;
    CHECK(hanging == Approx((kHalf - kPi * kPi) / kHalf).margin(1e-4));
    for (uint64_t seed = 0; seed < 5; ++seed) {
      const double ret = test::run_episode(*env, seed, hold_down, 10000).episode_return();
      CHECK((ret >= -1 && ret < 0.25));  // from a random start the pole needs a while to come down
    }
  }
}

TEST_CASE("PositionOnlyPendulum popgym base tests: obs and state in their spaces, seeded replay", "[pendulum]") {
  for (const char* id : kIds) {
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 5ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      CHECK(ep.truncated.back() == 1);
      for (const auto& o : ep.obs) REQUIRE(env->observation_space().contains(o));
      CHECK(test::check_states_random_episode(*env, seed) == env->max_episode_steps());
    }
  }
}

TEST_CASE("PositionOnlyPendulum rejects actions of the wrong size or NaN", "[pendulum]") {
  auto env = make_env("popgym/PositionOnlyPendulumEasy", kRaw);
  std::vector<float> obs(2);
  CHECK_THROWS_AS(env->step(std::vector<float>{0}, obs), rlm::EnvError);  // before reset
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{1, 2}, obs),
                    "popgym-PositionOnlyPendulumEasy-v0: invalid action [1, 2] for action space Box(1)");
  CHECK_THROWS_AS(env->step(std::vector<float>{}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{std::nanf("")}, obs), rlm::EnvError);
  CHECK_THROWS_AS(PositionOnlyPendulum("x/Bad", {.max_episode_length = 0}), rlm::EnvError);
}
