// LunarLander-v3 / LunarLanderContinuous-v3 on Box2D 2.4.1 (Gymnasium's lunar_lander.py). Pybox2d wraps Box2D 2.3,
// so no Gymnasium trajectory can be replayed bit for bit; these tests check what is exact (constants, masses,
// terrain for injected draws, observation, reward and termination rules, the engine geometry, determinism) and
// compare the rest statistically with the bands of docs/envs/box2d.md (n = 200 fixed seeds, heuristic and random
// policies).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <utility>
#include <vector>

#include "box2d/lunar_lander_policies.hpp"
#include "core/error.hpp"
#include "envs/box2d/lunar_lander.hpp"
#include "envs/box2d/lunar_lander_forces.hpp"
#include "envs/rng.hpp"

using rlm::envs::box2d::LanderEnd;
using rlm::envs::box2d::LunarLander;
using rlm::envs::box2d::LunarLanderConfig;
using rlm::envs::box2d::LunarLanderDraws;

namespace {

constexpr double kH = 400.0 / 30.0;
using Obs = std::vector<float>;

LunarLanderConfig discrete_config() { return {}; }
LunarLanderConfig continuous_config() {
  LunarLanderConfig c;
  c.continuous = true;
  return c;
}

rlm::envs::StepResult step_discrete(LunarLander& env, int a, Obs& obs) {
  const float action = static_cast<float>(a);
  return env.step({&action, 1}, obs);
}
rlm::envs::StepResult step_continuous(LunarLander& env, float a0, float a1, Obs& obs) {
  const float action[2] = {a0, a1};
  return env.step(action, obs);
}

/// Gymnasium's shaping, recomputed from the float32 observation.
double shaping(const Obs& s) {
  return -100 * std::sqrt(double(s[0]) * s[0] + double(s[1]) * s[1]) -
         100 * std::sqrt(double(s[2]) * s[2] + double(s[3]) * s[3]) - 100 * std::abs(double(s[4])) + 10.0 * s[6] +
         10.0 * s[7];
}

/// Per-step changes of (vx, vy, ω) in physical units, from two observations.
struct Delta {
  double vx, vy, omega;
};
Delta delta(const Obs& before, const Obs& after) {
  return {(double(after[2]) - before[2]) / 0.2, (double(after[3]) - before[3]) / (kH / 2 / 50),
          (double(after[5]) - before[5]) / 0.4};
}

struct Summary {
  double mean = 0, sd = 0, landing_rate = 0, mean_length = 0;
  int episodes = 0;
};

/// The band tests' episode loop over seeds 0..n−1: reset(seed), then the policy until terminated or truncated.
/// `policy(obs, rng)` writes the action; `rng` is the policy's own stream (random policies), seeded once.
template <class Policy>
Summary play(LunarLander& env, int n, Policy policy) {
  rlm::envs::Rng policy_rng(20240611);
  Obs obs(8);
  std::vector<float> action(env.config().continuous ? 2 : 1);
  double sum = 0, sq = 0, landings = 0, steps = 0;
  for (int e = 0; e < n; ++e) {
    env.reset(static_cast<uint64_t>(e), obs);
    double ret = 0;
    for (;;) {
      policy(obs, policy_rng, action);
      const auto r = env.step(action, obs);
      ret += r.reward;
      steps += 1;
      if (r.terminated || r.truncated) {
        landings += r.success ? 1 : 0;
        break;
      }
    }
    sum += ret;
    sq += ret * ret;
  }
  Summary s;
  s.episodes = n;
  s.mean = sum / n;
  s.sd = std::sqrt(std::max(0.0, sq / n - s.mean * s.mean));
  s.landing_rate = landings / n;
  s.mean_length = steps / n;
  return s;
}

void heuristic(const Obs& obs, rlm::envs::Rng&, std::vector<float>& action) {
  if (action.size() == 1) {
    action[0] = rlm::envs::test::lunar_lander_heuristic_discrete(obs);
  } else {
    const auto a = rlm::envs::test::lunar_lander_heuristic_continuous(obs);
    action[0] = a[0];
    action[1] = a[1];
  }
}

void random_policy(const Obs&, rlm::envs::Rng& rng, std::vector<float>& action) {
  if (action.size() == 1) {
    action[0] = static_cast<float>(rng.uniform_int(4));
  } else {
    action[0] = static_cast<float>(rng.uniform(-1.0, 1.0));
    action[1] = static_cast<float>(rng.uniform(-1.0, 1.0));
  }
}

void report(const char* what, const Summary& s) {
  std::printf("%-44s mean %8.2f  sd %7.2f  landings %.3f  length %6.1f  (n = %d)\n", what, s.mean, s.sd, s.landing_rate,
              s.mean_length, s.episodes);
}

}  // namespace

TEST_CASE("lunar lander: spaces and constructor checks", "[box2d][lunar_lander]") {
  const LunarLander discrete("LunarLander-v3", discrete_config());
  CHECK(discrete.action_space().to_string() == "Discrete(4)");
  CHECK(discrete.observation_space().to_string() == "Box(8)");
  CHECK(discrete.max_episode_steps() == 1000);
  CHECK(discrete.reports_success());
  const auto& space = discrete.observation_space();
  const std::vector<float> high = {2.5f,  2.5f, 10.0f, 10.0f, static_cast<float>(2 * std::numbers::pi),
                                   10.0f, 1.0f, 1.0f};
  for (size_t i = 0; i < 8; ++i) {
    CHECK(space.high[i] == high[i]);
    CHECK(space.low[i] == (i < 6 ? -high[i] : 0.0f));
  }
  const LunarLander continuous("LunarLanderContinuous-v3", continuous_config());
  CHECK(continuous.action_space() == rlm::envs::Space::box({-1, -1}, {1, 1}));

  // Gymnasium asserts -12 < gravity < 0.
  for (double g : {-12.0, 0.0, -13.0, 1.0, std::nan("")}) {
    LunarLanderConfig c;
    c.gravity = g;
    INFO("gravity " << g);
    CHECK_THROWS_AS(LunarLander("LunarLander-v3", c), rlm::EnvError);
  }
  LunarLanderConfig c;
  c.gravity = -12.5;
  try {
    LunarLander("LunarLander-v3", c);
    FAIL("no error for gravity -12.5");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()).find("LunarLander-v3") != std::string::npos);
    CHECK(std::string(e.what()).find("-12.5") != std::string::npos);
  }
  for (double g : {-11.99, -0.01}) {
    c.gravity = g;
    CHECK_NOTHROW(LunarLander("LunarLander-v3", c));
  }
  // Wind outside Gymnasium's warning ranges is accepted, as Gymnasium accepts it.
  c = {};
  c.enable_wind = true;
  c.wind_power = 30;
  c.turbulence_power = 5;
  CHECK_NOTHROW(LunarLander("LunarLander-v3", c));
  c.max_episode_steps = 0;
  CHECK_THROWS_AS(LunarLander("LunarLander-v3", c), rlm::EnvError);
}

TEST_CASE("lunar lander: masses of the lander and its legs", "[box2d][lunar_lander]") {
  LunarLander env("LunarLander-v3", discrete_config());
  Obs obs(8);
  env.reset(3, obs);
  // The lander polygon covers 867 px² (a 34×10 rectangle under a trapezoid 34→28 px wide and 17 high), density 5.
  CHECK(env.lander_mass() == Approx(867.0 / 900.0 * 5.0).epsilon(1e-6));
  CHECK(env.lander_mass() == Approx(4.8167).margin(1e-4));
  // SetAsBox(LEG_W/30, LEG_H/30) takes half-extents: a 4×16 px box, density 1.
  for (int k = 0; k < 2; ++k) {
    CHECK(env.leg_mass(k) == Approx(64.0 / 900.0).epsilon(1e-6));
    CHECK(env.leg_mass(k) == Approx(0.0711).margin(1e-4));
  }
}

TEST_CASE("lunar lander: fixtures and leg joints as Gymnasium builds them", "[box2d][lunar_lander]") {
  LunarLander env("LunarLander-v3", discrete_config());
  Obs obs(8);
  env.reset(2, obs);
  const auto fixtures = env.fixtures();
  REQUIRE(fixtures.size() == 14);  // base edge + 10 terrain edges, lander, two legs
  const auto check = [](const rlm::envs::box2d::LanderFixtureInfo& f, float friction, float density, uint16_t category,
                        uint16_t mask) {
    CHECK(f.friction == friction);
    CHECK(f.density == density);
    CHECK(f.restitution == 0.0f);
    CHECK(f.category == category);
    CHECK(f.mask == mask);
  };
  check(fixtures[0], 0.2f, 0.0f, 0x0001, 0xFFFF);  // the base edge keeps the default fixture
  for (size_t i = 1; i <= 10; ++i) check(fixtures[i], 0.1f, 0.0f, 0x0001, 0xFFFF);
  check(fixtures[11], 0.1f, 5.0f, 0x0010, 0x0001);  // lander
  check(fixtures[12], 0.2f, 1.0f, 0x0020, 0x0001);  // legs: default friction
  check(fixtures[13], 0.2f, 1.0f, 0x0020, 0x0001);

  for (int k = 0; k < 2; ++k) {
    INFO("leg " << k);
    const double i = k == 0 ? -1.0 : 1.0;
    const auto j = env.leg_joint(k);
    // pybox2d's referenceAngle = bodyB.angle − bodyA.angle = i·0.05 (Box2D_joints.i; the C++ default would be 0).
    CHECK(j.reference_angle == static_cast<float>(i * 0.05));
    CHECK(j.lower_angle == (k == 0 ? 0.4f : -0.9f));
    CHECK(j.upper_angle == (k == 0 ? 0.9f : -0.4f));
    CHECK(j.max_motor_torque == 40.0f);
    CHECK(j.motor_speed == static_cast<float>(0.3 * i));
    CHECK(j.motor_enabled);
    CHECK(j.limit_enabled);
    CHECK(j.local_anchor_a == std::array<float, 2>{0.0f, 0.0f});
    CHECK(j.local_anchor_b == std::array<float, 2>{static_cast<float>(i * 20 / 30), static_cast<float>(18.0 / 30)});
  }

  // The legs are spring-loaded against a limit: joint angle 0.4 for leg 0 (−0.4 for leg 1), so relative to the
  // lander they stand at ±(0.4 − 0.05) rad; a referenceAngle of 0 would give ±0.4.
  LunarLanderDraws draws;
  draws.initial_force = std::array<double, 2>{0.0, 0.0};
  env.set_draws_for_testing(draws);
  env.reset(2, obs);
  for (int t = 0; t < 25; ++t) step_discrete(env, 0, obs);
  CHECK(env.leg_angle(0) == Approx(0.35).margin(0.01));
  CHECK(env.leg_angle(1) == Approx(-0.35).margin(0.01));
}

TEST_CASE("lunar lander: reset observations lie in the measured ranges", "[box2d][lunar_lander]") {
  for (bool continuous : {false, true}) {
    LunarLander env("LunarLander-v3", continuous ? continuous_config() : discrete_config());
    Obs obs(8);
    std::array<float, 8> lo, hi;
    lo.fill(1e9f);
    hi.fill(-1e9f);
    for (uint64_t seed = 0; seed < 1000; ++seed) {
      env.reset(seed, obs);
      for (size_t i = 0; i < 8; ++i) {
        lo[i] = std::min(lo[i], obs[i]);
        hi[i] = std::max(hi[i], obs[i]);
      }
      REQUIRE(env.lander_awake());
      REQUIRE(env.elapsed_steps() == 0);
    }
    INFO("continuous " << continuous);
    // Pre-port ranges (docs/envs/box2d.md): s0 ±0.008; s1 [1.398, 1.422]; s2 ±0.81; s3 [−0.56, 0.51]; s4 ±0.009;
    // s5 ±0.18; no contact.
    CHECK(lo[0] >= -0.009f);
    CHECK(hi[0] <= 0.009f);
    CHECK(lo[1] >= 1.395f);
    CHECK(hi[1] <= 1.425f);
    CHECK(lo[2] >= -0.83f);
    CHECK(hi[2] <= 0.83f);
    CHECK(lo[3] >= -0.575f);
    CHECK(hi[3] <= 0.525f);
    CHECK(lo[4] >= -0.01f);
    CHECK(hi[4] <= 0.01f);
    CHECK(lo[5] >= -0.2f);
    CHECK(hi[5] <= 0.2f);
    CHECK(lo[6] == 0.0f);
    CHECK(hi[6] == 0.0f);
    CHECK(lo[7] == 0.0f);
    CHECK(hi[7] == 0.0f);
    // The push (up to 1000 N for one 0.02 s step, on ~4.96 kg) really spans its range: ±4 m/s.
    CHECK(lo[2] < -0.75f);
    CHECK(hi[2] > 0.75f);
    CHECK(lo[3] < -0.5f);
    CHECK(hi[3] > 0.45f);
  }
}

TEST_CASE("lunar lander: engine impulse geometry keeps the 17 vs 14 lever", "[box2d][lunar_lander]") {
  using namespace rlm::envs::box2d;
  // θ = 0, no dispersion: the main engine pushes straight up from 4 px below the origin; the right engine
  // (direction +1) pushes towards +x from 12 px to the left and 14 px up.
  LanderEngineFrame f{0.0, 1.0, -1.0, 0.0, 10.0, 5.0, 0.0, 0.0};
  const auto main = lander_main_impulse(f, 1.0);
  CHECK(main.jx == Approx(0.0).margin(1e-15));
  CHECK(main.jy == Approx(13.0 * 4.0 / 30.0));
  CHECK(main.px == Approx(10.0));
  CHECK(main.py == Approx(5.0 - 4.0 / 30.0));
  const auto half = lander_main_impulse(f, 0.5);
  CHECK(half.jy == Approx(0.5 * main.jy));
  const auto right = lander_side_impulse(f, +1.0, 1.0);
  CHECK(right.jx == Approx(0.6 * 12.0 / 30.0));
  CHECK(right.jy == Approx(0.0).margin(1e-15));
  CHECK(right.px == Approx(10.0 - 12.0 / 30.0));
  CHECK(right.py == Approx(5.0 + 14.0 / 30.0));
  const auto left = lander_side_impulse(f, -1.0, 0.5);
  CHECK(left.jx == Approx(-0.5 * 0.6 * 12.0 / 30.0));
  CHECK(left.px == Approx(10.0 + 12.0 / 30.0));
  // θ = π/2 (lying on its left side): tip = (1, 0), side = (0, 1). The application point moves 17 px along tip,
  // where a 14 px lever would have been symmetric with the θ = 0 case.
  f = {1.0, 0.0, 0.0, 1.0, 10.0, 5.0, 0.0, 0.0};
  const auto tilted = lander_side_impulse(f, +1.0, 1.0);
  CHECK(tilted.jx == Approx(0.0).margin(1e-15));
  CHECK(tilted.jy == Approx(0.6 * 12.0 / 30.0));
  CHECK(tilted.px == Approx(10.0 - 17.0 / 30.0));
  CHECK(tilted.py == Approx(5.0 - 12.0 / 30.0));
  // Dispersion jitters the main nozzle by 2·d0 along tip and d1 along side (θ = 0: d1 shifts x, d0 shifts y).
  f = {0.0, 1.0, -1.0, 0.0, 10.0, 5.0, 0.5 / 30.0, 0.25 / 30.0};
  const auto jittered = lander_main_impulse(f, 1.0);
  CHECK(jittered.px == Approx(10.0 - 0.25 / 30.0));
  CHECK(jittered.py == Approx(5.0 - (4.0 / 30.0 + 1.0 / 30.0)));
  CHECK(jittered.jx == Approx(13.0 * 0.25 / 30.0));
  CHECK(jittered.jy == Approx(13.0 * 5.0 / 30.0));
}

TEST_CASE("lunar lander: action sign table and engine thresholds", "[box2d][lunar_lander]") {
  LunarLander env("LunarLander-v3", discrete_config());
  LunarLander cont("LunarLanderContinuous-v3", continuous_config());
  Obs obs0(8), obs(8), ref(8);
  // Mean (Δvx, Δvy, Δω) of one step from the reset state, per discrete action, measured before the port.
  const Delta table[4] = {{0.0, -0.192, 0.0}, {-0.049, -0.192, 0.098}, {0.0, 0.159, 0.0}, {0.050, -0.192, -0.100}};
  const int n = 200;
  for (int a = 0; a < 4; ++a) {
    Delta mean{0, 0, 0};
    for (int seed = 0; seed < n; ++seed) {
      env.reset(seed, obs0);
      step_discrete(env, a, obs);
      const Delta d = delta(obs0, obs);
      mean.vx += d.vx / n;
      mean.vy += d.vy / n;
      mean.omega += d.omega / n;
      // Against the noop from the same state (same draws): the engine's own effect, seed by seed.
      env.reset(seed, obs0);
      step_discrete(env, 0, ref);
      const Delta e = delta(ref, obs);
      INFO("action " << a << " seed " << seed);
      if (a == 1) {
        REQUIRE(e.vx < -0.03);
        REQUIRE(e.omega > 0.07);
      }
      // Dispersion scales the main engine's lever 4 ± 2 px (0.5x to 1.5x of ~0.35 m/s) and the side engine's
      // 12 ± 3 px.
      if (a == 2) {
        REQUIRE(e.vy > 0.15);
        REQUIRE(e.vy < 0.55);
      }
      if (a == 3) {
        REQUIRE(e.vx > 0.03);
        REQUIRE(e.omega < -0.07);
      }
    }
    INFO("action " << a << ": dvx " << mean.vx << " dvy " << mean.vy << " domega " << mean.omega);
    CHECK(mean.vx == Approx(table[a].vx).margin(0.006));
    CHECK(mean.vy == Approx(table[a].vy).margin(0.006));
    CHECK(mean.omega == Approx(table[a].omega).margin(0.01));
  }

  // Continuous actions at full power are the discrete engines exactly (same draws, same impulses), clipping included.
  for (int seed = 0; seed < 20; ++seed) {
    const auto same = [&](float a0, float a1, int discrete) {
      cont.reset(seed, obs0);
      const auto rc = step_continuous(cont, a0, a1, obs);
      env.reset(seed, obs0);
      const auto rd = step_discrete(env, discrete, ref);
      INFO("seed " << seed << " action (" << a0 << ", " << a1 << ") vs " << discrete);
      CHECK(obs == ref);
      CHECK(rc.reward == rd.reward);
    };
    same(0.0f, 0.0f, 0);
    same(1.0f, 0.0f, 2);
    same(0.0f, -1.0f, 1);
    same(0.0f, 1.0f, 3);
    same(5.0f, 0.0f, 2);  // clipped to 1
    same(0.0f, -7.0f, 1);
    // Thresholds: a0 ≤ 0 leaves the main engine off, |a1| ≤ 0.5 the side engines.
    same(-1.0f, 0.0f, 0);
    same(-0.3f, 0.5f, 0);
    same(0.0f, -0.5f, 0);
    same(-0.0f, 0.3f, 0);
  }
  // Just above the thresholds the engines fire, at (clip(a0, 0, 1) + 1)/2 and clip(|a1|, 0.5, 1) power: with the
  // same draws, the velocity change against the noop scales with the power (the dispersion jitter cancels).
  const auto effect = [&](int seed, float a0, float a1) {
    cont.reset(seed, obs0);
    step_continuous(cont, 0.0f, 0.0f, ref);
    cont.reset(seed, obs0);
    step_continuous(cont, a0, a1, obs);
    return delta(ref, obs);
  };
  double small_main_vy = 0;
  for (int seed = 0; seed < 50; ++seed) {
    INFO("seed " << seed);
    const Delta full_main = effect(seed, 1.0f, 0.0f), full_right = effect(seed, 0.0f, 1.0f),
                full_left = effect(seed, 0.0f, -1.0f);
    const Delta small = effect(seed, 0.01f, 0.0f);
    CHECK(small.vy / full_main.vy == Approx(0.505).margin(0.005));
    small_main_vy += (delta(obs0, ref).vy + small.vy) / 50;
    CHECK(effect(seed, 0.0f, 0.51f).vx / full_right.vx == Approx(0.51).margin(0.005));
    CHECK(effect(seed, 0.0f, -0.51f).vx / full_left.vx == Approx(0.51).margin(0.005));
    CHECK(effect(seed, 0.0f, 0.75f).vx / full_right.vx == Approx(0.75).margin(0.005));
    CHECK(effect(seed, 0.75f, 0.0f).vy / full_main.vy == Approx(0.875).margin(0.005));
  }
  // Pre-port: a0 = 0.01 gives a mean Δvy of −0.017 (the spread of the main engine's lever leaves ±0.007 at n = 50).
  CHECK(small_main_vy == Approx(-0.017).margin(0.015));
}

TEST_CASE("lunar lander: rewards are the shaping difference less fuel and the reset step sets the baseline",
          "[box2d][lunar_lander]") {
  LunarLander env("LunarLanderContinuous-v3", continuous_config());
  Obs obs0(8), obs(8);
  struct Case {
    float a0, a1;
    double fuel;
  };
  // Fuel: 0.30·m with m = (clip(a0, 0, 1) + 1)/2, plus 0.03·s with s = clip(|a1|, 0.5, 1).
  const Case cases[] = {{0.0f, 0.0f, 0.0},          {1.0f, 0.0f, 0.30},        {0.5f, 0.0f, 0.30 * 0.75},
                        {0.0f, 0.75f, 0.03 * 0.75}, {0.0f, -0.6f, 0.03 * 0.6}, {0.2f, 1.0f, 0.30 * 0.6 + 0.03},
                        {-0.5f, 0.5f, 0.0},         {1.0f, -1.0f, 0.30 + 0.03}};
  for (int seed = 0; seed < 10; ++seed) {
    for (const Case& c : cases) {
      env.reset(seed, obs0);
      const auto r = step_continuous(env, c.a0, c.a1, obs);
      INFO("seed " << seed << " action (" << c.a0 << ", " << c.a1 << ")");
      // The first agent step's reward is relative to the reset step's shaping (the reset step's own reward, 0 by
      // the missing prev_shaping, is discarded): it is small, not the ~−150 of a full shaping.
      CHECK(r.reward == Approx(shaping(obs) - shaping(obs0) - c.fuel).margin(2e-4));
      CHECK(std::abs(r.reward) < 5.0f);
      CHECK_FALSE(r.terminated);
      CHECK_FALSE(r.truncated);
    }
  }
  // Later steps continue the chain.
  env.reset(4, obs0);
  for (int t = 0; t < 30; ++t) {
    const auto r = step_continuous(env, 0.3f, 0.0f, obs);
    CHECK(r.reward == Approx(shaping(obs) - shaping(obs0) - 0.30 * 0.65).margin(2e-4));
    obs0 = obs;
  }
}

TEST_CASE("lunar lander: terminal rewards replace the step reward", "[box2d][lunar_lander]") {
  Obs obs(8);
  LunarLander env("LunarLander-v3", discrete_config());
  SECTION("a noop policy always crashes with exactly -100") {
    for (int seed = 0; seed < 30; ++seed) {
      env.reset(seed, obs);
      rlm::envs::StepResult r;
      int64_t t = 0;
      do {
        r = step_discrete(env, 0, obs);
        ++t;
      } while (!r.terminated && !r.truncated);
      INFO("seed " << seed << " after " << t << " steps");
      CHECK(r.terminated);
      CHECK_FALSE(r.truncated);
      CHECK(r.reward == -100.0f);
      CHECK_FALSE(r.success);
      CHECK((env.end_cause() == LanderEnd::crashed || env.end_cause() == LanderEnd::out_of_bounds));
      CHECK(env.elapsed_steps() == t);
      CHECK_THROWS_AS(step_discrete(env, 0, obs), rlm::EnvError);
    }
  }
  SECTION("leaving the screen sideways ends with -100") {
    // A 3000 N push gives about 12 m/s sideways (0.024 observation units per step): the lander leaves the 20 m
    // wide screen in about 40 steps, well before it could reach the ground. The episode ends on the first step with
    // |s0| >= 1.
    for (double direction : {1.0, -1.0}) {
      LunarLanderDraws draws;
      draws.initial_force = std::array<double, 2>{3000.0 * direction, 0.0};
      env.set_draws_for_testing(draws);
      env.reset(1, obs);
      rlm::envs::StepResult r;
      Obs before = obs;
      int t = 0;
      do {
        before = obs;
        r = step_discrete(env, 0, obs);
        ++t;
      } while (!r.terminated && t < 200);
      INFO("direction " << direction << " after " << t << " steps");
      CHECK(r.terminated);
      CHECK(r.reward == -100.0f);
      CHECK(std::abs(before[0]) < 1.0f);
      CHECK(std::abs(obs[0]) >= 1.0f);
      CHECK(obs[0] * direction > 0);
      CHECK(env.end_cause() == LanderEnd::out_of_bounds);
      CHECK_FALSE(r.success);
      CHECK(t > 30);
      CHECK(t < 50);
    }
    env.set_draws_for_testing({});
  }
  SECTION("falling asleep on the ground ends with +100 and success") {
    int landed = 0;
    for (int seed = 0; seed < 20; ++seed) {
      env.reset(seed, obs);
      rlm::envs::StepResult r;
      do {
        r = step_discrete(env, static_cast<int>(rlm::envs::test::lunar_lander_heuristic_discrete(obs)), obs);
        if (!r.terminated && !r.truncated) REQUIRE(env.lander_awake());
      } while (!r.terminated && !r.truncated);
      if (env.end_cause() == LanderEnd::landed) {
        ++landed;
        CHECK(r.terminated);
        CHECK(r.reward == 100.0f);
        CHECK(r.success);
        CHECK_FALSE(env.lander_awake());
      } else {
        CHECK_FALSE(r.success);
        CHECK((r.reward == -100.0f || r.truncated));
      }
    }
    CHECK(landed >= 15);
  }
  SECTION("step before the first reset is misuse") {
    LunarLander fresh("LunarLander-v3", discrete_config());
    CHECK_THROWS_AS(step_discrete(fresh, 0, obs), rlm::EnvError);
    CHECK_THROWS_AS(fresh.lander_mass(), rlm::EnvError);
  }
  SECTION("invalid actions are rejected") {
    env.reset(0, obs);
    for (float bad : {4.0f, -1.0f, 1.5f, std::nanf("")}) CHECK_THROWS_AS(env.step({&bad, 1}, obs), rlm::EnvError);
    LunarLander cont("LunarLanderContinuous-v3", continuous_config());
    cont.reset(0, obs);
    CHECK_THROWS_AS(step_continuous(cont, std::nanf(""), 0.0f, obs), rlm::EnvError);
    CHECK_THROWS_AS(step_continuous(cont, 0.0f, INFINITY, obs), rlm::EnvError);
    const float one = 0.0f;
    CHECK_THROWS_AS(cont.step({&one, 1}, obs), rlm::EnvError);
    CHECK_NOTHROW(step_continuous(cont, 0.0f, 0.0f, obs));
  }
}

namespace {

/// The continuous heuristic told that it flies one observation unit (6.7 m) lower than it does: it hovers about
/// 10 m above the pad and never lands, so only the time limit ends the episode.
void hover(const Obs& obs, rlm::envs::Rng&, std::vector<float>& action) {
  Obs fake = obs;
  fake[1] -= 1.0f;
  const auto a = rlm::envs::test::lunar_lander_heuristic_continuous(fake);
  action[0] = a[0];
  action[1] = a[1];
}

}  // namespace

TEST_CASE("lunar lander: truncation at the time limit", "[box2d][lunar_lander]") {
  LunarLander env("LunarLanderContinuous-v3", continuous_config());
  Obs obs(8);
  rlm::envs::Rng rng(1);
  std::vector<float> action(2);
  for (uint64_t seed : {0u, 7u}) {
    env.reset(seed, obs);
    for (int64_t t = 1; t <= 1000; ++t) {
      hover(obs, rng, action);
      const auto r = env.step(action, obs);
      INFO("seed " << seed << " step " << t);
      REQUIRE_FALSE(r.terminated);
      REQUIRE(r.truncated == (t == 1000));
      REQUIRE_FALSE(r.success);
      REQUIRE(std::abs(r.reward) < 60.0f);
    }
    CHECK(env.end_cause() == LanderEnd::none);
    CHECK(obs[1] > 0.5f);  // still airborne
    CHECK(env.elapsed_steps() == 1000);
    CHECK_THROWS_AS(env.step(action, obs), rlm::EnvError);
  }

  // An episode that terminates exactly at the limit reports both flags, as Gymnasium's TimeLimit does.
  // The first seed from 11 on whose heuristic episode terminates (about 2% are cut by the limit instead).
  LunarLander free_env("LunarLander-v3", discrete_config());
  uint64_t seed = 11;
  int64_t length = 0;
  rlm::envs::StepResult last;
  for (;; ++seed) {
    REQUIRE(seed < 31);
    free_env.reset(seed, obs);
    length = 0;
    do {
      last = step_discrete(free_env, static_cast<int>(rlm::envs::test::lunar_lander_heuristic_discrete(obs)), obs);
      ++length;
    } while (!last.terminated && !last.truncated);
    if (last.terminated) break;
  }
  LunarLanderConfig limited;
  limited.max_episode_steps = length;
  LunarLander cut("LunarLander-v3", limited);
  CHECK(cut.max_episode_steps() == length);
  cut.reset(seed, obs);
  for (int64_t t = 1; t <= length; ++t) {
    const auto r = step_discrete(cut, static_cast<int>(rlm::envs::test::lunar_lander_heuristic_discrete(obs)), obs);
    REQUIRE(r.terminated == (t == length));
    REQUIRE(r.truncated == (t == length));
    if (t == length) CHECK(r.reward == last.reward);
  }
}

TEST_CASE("lunar lander: terrain for injected heights puts the pad at 0.99 H/4", "[box2d][lunar_lander]") {
  LunarLander env("LunarLander-v3", discrete_config());
  Obs obs(8), plain(8);
  std::array<double, 12> h;
  for (size_t i = 0; i < 12; ++i) h[i] = 0.3 + 0.5 * static_cast<double>(i);  // h[11] = 5.8 stands out
  LunarLanderDraws draws;
  draws.heights = h;
  env.reset(5, plain);
  env.set_draws_for_testing(draws);
  env.reset(5, obs);
  // The terrain draws are still taken from the Rng, so everything else (here the reset step) is unchanged.
  CHECK(obs == plain);

  const double pad = kH / 4;
  std::array<double, 12> eff = h;  // h[3..7] become the pad height
  for (size_t i = 3; i <= 7; ++i) eff[i] = pad;
  const auto& y = env.terrain_y();
  CHECK(y[0] == Approx(0.33 * (h[11] + h[0] + h[1])).epsilon(1e-14));  // Python's height[-1] is height[11]
  for (size_t i = 1; i < 11; ++i) CHECK(y[i] == Approx(0.33 * (eff[i - 1] + eff[i] + eff[i + 1])).epsilon(1e-14));
  for (size_t i = 4; i <= 6; ++i) CHECK(y[i] == Approx(0.99 * pad).epsilon(1e-14));  // 3.30 m, not 3.333
  CHECK(y[3] == Approx(0.33 * (h[2] + 2 * pad)).epsilon(1e-14));
  CHECK(y[7] == Approx(0.33 * (2 * pad + h[8])).epsilon(1e-14));

  // The moon as Box2D holds it: the base edge, then 10 edges between consecutive (2i, y[i]).
  const auto edges = env.moon_edges();
  REQUIRE(edges.size() == 11);
  CHECK(edges[0] == std::array<float, 4>{0.0f, 0.0f, 20.0f, 0.0f});
  for (size_t i = 0; i < 10; ++i) {
    INFO("edge " << i);
    CHECK(edges[i + 1] == std::array<float, 4>{static_cast<float>(2.0 * i), static_cast<float>(y[i]),
                                               static_cast<float>(2.0 * (i + 1)), static_cast<float>(y[i + 1])});
  }

  // Drawn terrain: the pad is always at 0.99·H/4, and every vertex lies in [0, 0.99·H/2].
  env.set_draws_for_testing({});
  std::array<double, 11> first{};
  for (uint64_t seed = 0; seed < 200; ++seed) {
    env.reset(seed, obs);
    const auto& t = env.terrain_y();
    if (seed == 0) first = t;
    for (size_t i = 4; i <= 6; ++i) REQUIRE(t[i] == Approx(0.99 * pad).epsilon(1e-14));
    for (double v : t) {
      REQUIRE(v >= 0.0);
      REQUIRE(v <= 0.99 * kH / 2 + 1e-12);
    }
    if (seed > 0) REQUIRE(t != first);  // different seeds, different terrain
  }
}

TEST_CASE("lunar lander: same seed gives the same rollout and other seeds differ", "[box2d][lunar_lander]") {
  for (bool continuous : {false, true}) {
    for (bool wind : {false, true}) {
      LunarLanderConfig c = continuous ? continuous_config() : discrete_config();
      c.enable_wind = wind;
      LunarLander a("LunarLander-v3", c), b("LunarLander-v3", c);
      rlm::envs::Rng unused(0);
      const auto rollout = [&](LunarLander& env, uint64_t seed) {
        std::vector<float> trace;
        Obs obs(8);
        std::vector<float> action(continuous ? 2 : 1);
        env.reset(seed, obs);
        trace.insert(trace.end(), obs.begin(), obs.end());
        for (;;) {
          heuristic(obs, unused, action);
          const auto r = env.step(action, obs);
          trace.insert(trace.end(), obs.begin(), obs.end());
          trace.push_back(r.reward);
          if (r.terminated || r.truncated) break;
        }
        return trace;
      };
      INFO("continuous " << continuous << " wind " << wind);
      const auto first = rollout(a, 42);
      rollout(a, 43);  // an episode in between leaves nothing behind (a new world every reset)
      CHECK(rollout(a, 42) == first);
      CHECK(rollout(b, 42) == first);  // another instance
      CHECK(rollout(b, 44) != first);
    }
  }
}

TEST_CASE("lunar lander: wind indices", "[box2d][lunar_lander]") {
  LunarLanderConfig c;
  c.enable_wind = true;
  LunarLander env("LunarLander-v3", c);
  Obs obs(8);
  // Gymnasium's test: resets with the same seed give the same wind and torque indices.
  env.reset(123, obs);
  const int64_t wind = env.wind_index(), torque = env.torque_index();
  for (int t = 0; t < 20; ++t) step_discrete(env, 0, obs);
  CHECK(env.wind_index() == wind + 20);
  env.reset(123, obs);
  CHECK(env.wind_index() == wind);
  CHECK(env.torque_index() == torque);
  env.reset(124, obs);
  CHECK((env.wind_index() != wind || env.torque_index() != torque));

  // numpy's integers(−9999, 9999) excludes 9999; the reset step has already used one index.
  int64_t lo = 1 << 20, hi = -(1 << 20);
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    env.reset(seed, obs);
    lo = std::min({lo, env.wind_index() - 1, env.torque_index() - 1});
    hi = std::max({hi, env.wind_index() - 1, env.torque_index() - 1});
  }
  CHECK(lo >= -9999);
  CHECK(hi <= 9998);
  CHECK(lo < -9900);
  CHECK(hi > 9900);

  // The indices advance once per step while no leg touches, and pause while one does.
  LunarLanderDraws draws;
  draws.wind_indices = std::array<int64_t, 2>{100, -200};
  env.set_draws_for_testing(draws);
  for (uint64_t seed = 0; seed < 10; ++seed) {
    env.reset(seed, obs);
    REQUIRE(env.wind_index() == 101);
    REQUIRE(env.torque_index() == -199);
    int64_t airborne = 0, grounded = 0;
    for (;;) {
      const bool touching = env.leg_contact(0) || env.leg_contact(1);
      REQUIRE(touching == (obs[6] != 0.0f || obs[7] != 0.0f));
      (touching ? grounded : airborne) += 1;
      const auto r = step_discrete(env, static_cast<int>(rlm::envs::test::lunar_lander_heuristic_discrete(obs)), obs);
      if (r.terminated || r.truncated) break;
    }
    INFO("seed " << seed);
    CHECK(env.wind_index() == 101 + airborne);
    CHECK(env.torque_index() == -199 + airborne);
    if (env.end_cause() == LanderEnd::landed) CHECK(grounded > 0);
  }

  // The wind acts on the lander through the reset step: with no push and no dispersion, the reset observation's
  // vx is the wind's impulse over the whole lander (~4.96 kg), and the turbulence turns it the same way.
  draws.initial_force = std::array<double, 2>{0.0, 0.0};
  draws.dispersion = std::array<double, 2>{0.0, 0.0};
  for (int64_t index : {50, -50, 123, 5000}) {
    draws.wind_indices = std::array<int64_t, 2>{index, index};
    env.set_draws_for_testing(draws);
    env.reset(3, obs);
    const double total_mass = env.lander_mass() + env.leg_mass(0) + env.leg_mass(1);
    const double force = 15.0 * rlm::envs::box2d::lander_wind_profile(index);
    INFO("index " << index << " force " << force);
    CHECK(obs[2] == Approx(0.2 * force * 0.02 / total_mass).epsilon(0.05));
    CHECK(obs[5] * force > 0);  // same sign: torque and force share the profile here
  }
  env.set_draws_for_testing({});

  // Without wind nothing is drawn for it, and the indices stay at 0.
  LunarLander calm("LunarLander-v3", discrete_config());
  calm.reset(123, obs);
  CHECK(calm.wind_index() == 0);
  CHECK(calm.torque_index() == 0);
}

TEST_CASE("lunar lander: wind profile and wind index draws", "[box2d][lunar_lander]") {
  using rlm::envs::box2d::lander_wind_profile;
  // math.tanh(math.sin(0.02 * i) + math.sin(math.pi * 0.01 * i)), evaluated by CPython.
  const std::pair<int64_t, double> expected[] = {{0, 0.0},
                                                 {1, 0.05136418311170413},
                                                 {50, 0.950936143654817},
                                                 {-50, -0.950936143654817},
                                                 {123, -0.03127103625992985},
                                                 {-9999, 0.723178518548366},
                                                 {9998, -0.7419805821937142},
                                                 {5000, -0.46710865052325284}};
  for (const auto& [i, want] : expected) CHECK(lander_wind_profile(i) == Approx(want).margin(1e-15));
  // numpy's integers(-9999, 9999) covers [-9999, 9998] uniformly.
  rlm::envs::Rng rng(77);
  int64_t lo = 0, hi = 0;
  double sum = 0;
  const int n = 2000000;
  for (int k = 0; k < n; ++k) {
    const int64_t v = rlm::envs::box2d::draw_lander_wind_index(rng);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += static_cast<double>(v);
  }
  CHECK(lo == -9999);
  CHECK(hi == 9998);
  CHECK(sum / n == Approx(-0.5).margin(5 * 5773.0 / std::sqrt(n)));
}

TEST_CASE("lunar lander: injected dispersion and push give symmetric free flight", "[box2d][lunar_lander]") {
  // With no push and no dispersion the lander falls straight: x, vx, the angle and ω stay (almost) zero, and a
  // full main-engine burn changes vy by the table's +0.159 − (−0.192) at every step.
  LunarLander env("LunarLander-v3", discrete_config());
  LunarLanderDraws draws;
  draws.initial_force = std::array<double, 2>{0.0, 0.0};
  draws.dispersion = std::array<double, 2>{0.0, 0.0};
  env.set_draws_for_testing(draws);
  Obs obs(8), before(8);
  env.reset(9, obs);
  CHECK(obs[0] == Approx(0.0).margin(1e-6));
  CHECK(obs[2] == Approx(0.0).margin(1e-6));
  CHECK(obs[4] == Approx(0.0).margin(1e-4));
  CHECK(obs[5] == Approx(0.0).margin(1e-4));
  env.reset(10, before);
  CHECK(before == obs);  // nothing else is random before the first agent step
  for (int t = 0; t < 20; ++t) {
    before = obs;
    step_discrete(env, t % 2 == 0 ? 2 : 0, obs);
    const Delta d = delta(before, obs);
    CHECK(d.vy == Approx(t % 2 == 0 ? 0.159 : -0.192).margin(0.01));
    CHECK(obs[0] == Approx(0.0).margin(1e-5));
    CHECK(obs[2] == Approx(0.0).margin(1e-5));
    CHECK(obs[4] == Approx(0.0).margin(1e-4));  // Box2D solves leg 0's joint first: not exactly mirror-symmetric
  }
}

TEST_CASE("lunar lander: the heuristic lands a single episode with return above 100", "[box2d][lunar_lander]") {
  // Gymnasium's test_env_implementation: demo_heuristic_lander(seed=1) must score > 100.
  for (bool continuous : {false, true}) {
    LunarLander env("LunarLander-v3", continuous ? continuous_config() : discrete_config());
    Obs obs(8);
    env.reset(1, obs);
    double total = 0;
    std::vector<float> action(continuous ? 2 : 1);
    rlm::envs::Rng unused(0);
    for (;;) {
      heuristic(obs, unused, action);
      const auto r = env.step(action, obs);
      total += r.reward;
      if (r.terminated || r.truncated) break;
    }
    INFO("continuous " << continuous << " seed 1 return " << total);
    CHECK(total > 100.0);
    CHECK(env.end_cause() == LanderEnd::landed);
  }
}

TEST_CASE("lunar lander: heuristic and random returns lie in the bands of docs/envs/box2d.md",
          "[box2d][lunar_lander][stats][slow]") {
  const int n = 200;
  const auto started = std::chrono::steady_clock::now();
  double steps = 0, episodes = 0;
  const auto count = [&](const Summary& s) {
    steps += s.mean_length * s.episodes;
    episodes += s.episodes;
  };
  {
    LunarLander env("LunarLander-v3", discrete_config());
    const Summary s = play(env, n, heuristic);
    report("discrete heuristic", s);
    count(s);
    CHECK(s.mean >= 210.0);
    CHECK(s.mean <= 265.0);
    CHECK(s.landing_rate >= 0.85);
    CHECK(s.landing_rate <= 0.96);
  }
  {
    LunarLander env("LunarLanderContinuous-v3", continuous_config());
    const Summary s = play(env, n, heuristic);
    report("continuous heuristic", s);
    count(s);
    CHECK(s.mean >= 276.0);
    CHECK(s.mean <= 292.0);
    CHECK(s.landing_rate >= 0.97);
  }
  {
    LunarLander env("LunarLander-v3", discrete_config());
    const Summary s = play(env, n, random_policy);
    report("discrete random", s);
    count(s);
    CHECK(s.mean >= -245.0);
    CHECK(s.mean <= -160.0);
  }
  {
    LunarLander env("LunarLanderContinuous-v3", continuous_config());
    const Summary s = play(env, n, random_policy);
    report("continuous random", s);
    count(s);
    CHECK(s.mean >= -275.0);
    CHECK(s.mean <= -185.0);
  }
  LunarLanderConfig wind = discrete_config();
  wind.enable_wind = true;  // wind_power 15, turbulence_power 1.5
  {
    LunarLander env("LunarLander-v3", wind);
    const Summary s = play(env, n, heuristic);
    report("discrete heuristic with wind", s);
    count(s);
    CHECK(s.mean >= 50.0);
    CHECK(s.mean <= 150.0);
  }
  wind.continuous = true;
  {
    LunarLander env("LunarLanderContinuous-v3", wind);
    const Summary s = play(env, n, heuristic);
    report("continuous heuristic with wind", s);
    count(s);
    CHECK(s.mean >= 155.0);
    CHECK(s.mean <= 240.0);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("lunar lander: %.0f episodes in %.2f s (%.0f episodes/s, %.0f env steps/s)\n", episodes, seconds,
              episodes / seconds, steps / seconds);
}
