// BipedalWalker-v3 / BipedalWalkerHardcore-v3 on Box2D 2.4.1 (Gymnasium's bipedal_walker.py). Gymnasium runs on
// pybox2d's Box2D 2.3, whose joint and contact solvers differ, so trajectories cannot be compared bit for bit: these
// are self-contained checks (docs/envs/box2d.md). Exact: constants, masses, the terrain generator for chosen draws,
// the flat-pad lidar identity, the reward and termination rules. About 1e-3: the reset observation. Statistical: the
// bands of docs/envs/box2d.md for Gymnasium's heuristic and uniformly random policies over 200 fixed seeds.
#include <box2d/box2d.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "box2d/bipedal_walker_policies.hpp"
#include "core/error.hpp"
#include "envs/box2d/bipedal_walker.hpp"
#include "envs/rng.hpp"

using rlm::envs::Rng;
using rlm::envs::box2d::BipedalWalker;
using rlm::envs::box2d::BipedalWalkerConfig;
using rlm::envs::box2d::BipedalWalkerDraws;
using rlm::envs::box2d::WalkerEnd;
using rlm::envs::box2d::bipedal::TerrainFeature;
namespace bipedal = rlm::envs::box2d::bipedal;

namespace {

constexpr double kTS = bipedal::kTerrainStep;
constexpr double kTH = bipedal::kTerrainHeight;
constexpr double kLidarRange = 160.0 / 30.0;
constexpr double kFinishX = 190 * kTS;

using Action = std::array<float, 4>;

struct WalkerEpisode {
  double episode_return = 0;
  int64_t length = 0;
  float last_reward = 0;
  bool terminated = false, truncated = false, success = false;
  WalkerEnd end = WalkerEnd::none;
  double final_x = 0;  ///< the hull origin after the last step
};

/// Plays one episode from reset(seed); `policy(obs)` gives each action, the first from the reset observation.
template <class Policy>
WalkerEpisode play(BipedalWalker& env, uint64_t seed, Policy&& policy) {
  std::vector<float> obs(24);
  env.reset(seed, obs);
  WalkerEpisode ep;
  for (;;) {
    const Action a = policy(std::span<const float>(obs));
    const auto r = env.step(a, obs);
    ep.episode_return += r.reward;
    ++ep.length;
    if (r.terminated || r.truncated) {
      ep.last_reward = r.reward;
      ep.terminated = r.terminated;
      ep.truncated = r.truncated;
      ep.success = r.success;
      ep.end = env.end_cause();
      ep.final_x = env.hull()->GetPosition().x;
      return ep;
    }
  }
}

/// Gymnasium's demo loop (bipedal_walker.py __main__): a zero action on the first step, the heuristic from the
/// second on.
WalkerEpisode play_heuristic(BipedalWalker& env, uint64_t seed) {
  rlm::envs::test::BipedalWalkerHeuristic heuristic;
  bool first = true;
  return play(env, seed, [&](std::span<const float> s) {
    if (first) {
      first = false;
      return Action{0, 0, 0, 0};
    }
    return heuristic.act(s);
  });
}

/// U[−1, 1]⁴ on every step, from a stream of its own.
WalkerEpisode play_random(BipedalWalker& env, uint64_t seed, uint64_t policy_seed) {
  Rng rng(policy_seed);
  return play(env, seed, [&](std::span<const float>) {
    Action a;
    for (float& v : a) v = static_cast<float>(rng.uniform(-1, 1));
    return a;
  });
}

// Box2D 2.4.1's GetBodyA/B are not const.
const b2Body* body_a(const b2RevoluteJoint* j) { return const_cast<b2RevoluteJoint*>(j)->GetBodyA(); }
const b2Body* body_b(const b2RevoluteJoint* j) { return const_cast<b2RevoluteJoint*>(j)->GetBodyB(); }

WalkerEpisode play_zero(BipedalWalker& env, uint64_t seed) {
  return play(env, seed, [](std::span<const float>) { return Action{0, 0, 0, 0}; });
}

struct Summary {
  double sum = 0, sq = 0, length = 0;
  int n = 0, fell = 0, finished = 0, truncated = 0;
  void add(const WalkerEpisode& ep) {
    sum += ep.episode_return;
    sq += ep.episode_return * ep.episode_return;
    length += static_cast<double>(ep.length);
    ++n;
    fell += ep.end == WalkerEnd::fell;
    finished += ep.end == WalkerEnd::finished;
    truncated += ep.truncated;
  }
  double mean() const { return sum / n; }
  double sd() const { return std::sqrt(std::max(0.0, sq / n - mean() * mean())); }
};

/// Every terminal step obeys Gymnasium's rules: a fall replaces the reward with −100 and is no success; the finish
/// line adds no bonus and is the only success; the time limit alone leaves the reward alone.
void check_terminal_step(const WalkerEpisode& ep, int64_t limit) {
  INFO("length " << ep.length << " last reward " << ep.last_reward << " end " << static_cast<int>(ep.end));
  REQUIRE(ep.length <= limit);
  CHECK(ep.truncated == (ep.length == limit));
  switch (ep.end) {
    case WalkerEnd::fell:
    case WalkerEnd::out_of_bounds:
      CHECK(ep.terminated);
      CHECK(ep.last_reward == -100.0f);
      CHECK_FALSE(ep.success);
      break;
    case WalkerEnd::finished:
      CHECK(ep.terminated);
      CHECK(ep.success);
      CHECK(ep.final_x > kFinishX);
      CHECK(std::abs(ep.last_reward) < 1.0f);  // a normal step's shaping difference: no bonus
      break;
    case WalkerEnd::none:
      CHECK_FALSE(ep.terminated);
      CHECK(ep.truncated);
      CHECK_FALSE(ep.success);
      break;
  }
}

}  // namespace

TEST_CASE("bipedal walker: spaces and limits", "[box2d][bipedal_walker]") {
  BipedalWalker normal("box2d/BipedalWalker", {});
  BipedalWalker hardcore("box2d/BipedalWalkerHardcore", {.hardcore = true});
  CHECK(normal.max_episode_steps() == 1600);
  CHECK(hardcore.max_episode_steps() == 2000);
  CHECK(BipedalWalker("box2d/BipedalWalker", {.max_episode_steps = 50}).max_episode_steps() == 50);
  CHECK_THROWS_AS(BipedalWalker("box2d/BipedalWalker", {.max_episode_steps = -1}), rlm::EnvError);
  CHECK(normal.reports_success());

  const auto& obs_space = normal.observation_space();
  REQUIRE(obs_space.raw_size() == 24);
  const float pi = static_cast<float>(std::numbers::pi);
  const std::vector<float> low{-pi, -5, -5, -5, -pi, -5, -pi, -5, 0,  -pi, -5, -pi,
                               -5,  0,  -1, -1, -1,  -1, -1,  -1, -1, -1,  -1, -1};
  const std::vector<float> high{pi, 5, 5, 5, pi, 5, pi, 5, 5, pi, 5, pi, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK(obs_space.low == low);
  CHECK(obs_space.high == high);
  CHECK(normal.action_space() == rlm::envs::Space::box({-1, -1, -1, -1}, {1, 1, 1, 1}));
}

TEST_CASE("bipedal walker: masses and joints as Gymnasium builds them", "[box2d][bipedal_walker]") {
  BipedalWalker env("box2d/BipedalWalker", {});
  std::vector<float> obs(24);
  env.reset(0, obs);
  // Hull 5·area(HULL_POLY/30); legs 1·(8/30)(34/30) and 1·(0.8·8/30)(34/30): the boxes take half-extents.
  CHECK(env.hull()->GetMass() == Approx(5.4222).margin(1e-4));
  for (int k : {0, 2}) CHECK(env.leg(k)->GetMass() == Approx(0.30222).margin(1e-4));
  for (int k : {1, 3}) CHECK(env.leg(k)->GetMass() == Approx(0.24178).margin(1e-4));
  // As pybox2d sets them (Box2D_joints.i): the hips carry referenceAngle = B.angle − A.angle = ±0.05, the knees 0.
  CHECK(env.joint(0)->GetReferenceAngle() == Approx(-0.05).margin(1e-7));
  CHECK(env.joint(2)->GetReferenceAngle() == Approx(0.05).margin(1e-7));
  CHECK(env.joint(1)->GetReferenceAngle() == 0.0f);
  CHECK(env.joint(3)->GetReferenceAngle() == 0.0f);
  for (int k : {0, 2}) {
    CHECK(body_a(env.joint(k)) == env.hull());
    CHECK(body_b(env.joint(k)) == env.leg(k));
    CHECK(env.joint(k)->GetLowerLimit() == -0.8f);
    CHECK(env.joint(k)->GetUpperLimit() == 1.1f);
    CHECK(body_a(env.joint(k + 1)) == env.leg(k));
    CHECK(body_b(env.joint(k + 1)) == env.leg(k + 1));
    CHECK(env.joint(k + 1)->GetLowerLimit() == -1.6f);
    CHECK(env.joint(k + 1)->GetUpperLimit() == -0.1f);
  }
  // Fixtures: the walker (category 0x20) only touches the ground (mask 0x01); the legs keep the default friction.
  CHECK(env.hull()->GetFixtureList()->GetFriction() == 0.1f);
  for (int k = 0; k < 4; ++k) {
    const b2Fixture* f = env.leg(k)->GetFixtureList();
    CHECK(f->GetFriction() == 0.2f);
    CHECK(f->GetFilterData().categoryBits == 0x0020);
    CHECK(f->GetFilterData().maskBits == 0x0001);
  }
  // The terrain: 199 two-sided edges with friction 2.5, and (normal mode) no other static body.
  int edges = 0, others = 0;
  for (const b2Body* b = env.world()->GetBodyList(); b != nullptr; b = b->GetNext()) {
    if (b->GetType() != b2_staticBody) continue;
    const b2Fixture* f = b->GetFixtureList();
    CHECK(f->GetFriction() == 2.5f);
    if (f->GetType() == b2Shape::e_edge) {
      ++edges;
      CHECK_FALSE(static_cast<const b2EdgeShape*>(f->GetShape())->m_oneSided);
    } else {
      ++others;
    }
  }
  CHECK(edges == 199);
  CHECK(others == 0);
}

TEST_CASE("bipedal walker: the reset observation on the start pad", "[box2d][bipedal_walker]") {
  // Measured before the port (docs/envs/box2d.md): after the reset step the walker stands on the flat pad, nearly
  // the same for every seed (the push is at most ±5 N for one step). Tolerance about 1e-3 (one step's solver gap).
  const std::array<double, 24> expected{0.0027, 0,      0,      -0.016, 0.092,  0,      0.860,  0,
                                        1,      0.033,  0,      0.854,  0,      1,      0.4408, 0.4458,
                                        0.4614, 0.4895, 0.5341, 0.6025, 0.7091, 0.8859, 1,      1};
  const std::array<double, 24> tolerance{5e-4, 1e-3, 5e-3, 5e-4, 2e-3, 1e-2, 2e-3, 1e-2, 0,    2e-3, 1e-2, 2e-3,
                                         1e-2, 0,    5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 0,    0};
  for (bool hardcore : {false, true}) {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = hardcore});
    std::vector<float> obs(24);
    for (uint64_t seed = 0; seed < 50; ++seed) {
      env.reset(seed, obs);
      INFO("hardcore " << hardcore << " seed " << seed);
      CHECK(env.initial_force() >= -5.0);
      CHECK(env.initial_force() < 5.0);
      CHECK(env.elapsed_steps() == 0);
      // In hardcore the shallow rays 8 and 9 can reach a stump at i = 20 (x = 9.33 m); all others see the pad.
      const size_t checked = hardcore ? 22 : 24;
      for (size_t i = 0; i < checked; ++i) {
        INFO("obs[" << i << "] = " << obs[i]);
        CHECK(std::abs(obs[i] - expected[i]) <= tolerance[i]);
      }
      CHECK(env.observation_space().contains(obs));
    }
  }
}

TEST_CASE("bipedal walker: lidar on the flat pad measures the hull height", "[box2d][bipedal_walker]") {
  // Gymnasium's lidar rays are world-fixed at angle 0.15·i from straight down, so on flat ground at height TH every
  // ray that hits has lidar_i·cos(0.15·i) = (hull y − TH) / LIDAR_RANGE. Ray 0 passes through both legs: the walker's
  // own fixtures are ignored. Rays 8 and 9 are too shallow to reach the pad within 5.33 m (in hardcore they may hit
  // a stump standing at i = 20).
  for (bool hardcore : {false, true}) {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = hardcore});
    std::vector<float> obs(24);
    for (uint64_t seed = 0; seed < 10; ++seed) {
      env.reset(seed, obs);
      const double height = (env.hull()->GetPosition().y - kTH) / kLidarRange;
      INFO("hardcore " << hardcore << " seed " << seed << " hull height " << height * kLidarRange);
      CHECK(height * kLidarRange == Approx(2.351).margin(2e-3));
      for (int i = 0; i < 8; ++i) CHECK(obs[14 + i] * std::cos(1.5 * i / 10.0) == Approx(height).margin(2e-6));
      if (!hardcore) {
        CHECK(obs[22] == 1.0f);
        CHECK(obs[23] == 1.0f);
      }
    }
  }
}

TEST_CASE("bipedal walker: the step reward is the shaping difference minus the motor cost", "[box2d][bipedal_walker]") {
  BipedalWalker env("box2d/BipedalWalker", {});
  std::vector<float> obs(24);
  env.reset(3, obs);
  double prev = env.shaping();
  CHECK(prev == Approx(130 * env.hull()->GetPosition().x / 30 - 5 * std::abs(env.hull()->GetAngle())));
  // The cost clips |a| to 1: 0.00035·80·(0.5 + 1 + 0 + 0.25).
  const Action a{0.5f, -2.0f, 0.0f, 0.25f};
  auto r = env.step(a, obs);
  const double shaping = 130 * static_cast<double>(env.hull()->GetPosition().x) / 30 - 5 * std::abs(double{obs[0]});
  CHECK(env.shaping() == Approx(shaping).margin(1e-6));
  CHECK(r.reward == Approx(shaping - prev - 0.028 * 1.75).margin(1e-5));
  CHECK_FALSE(r.terminated);
  CHECK_FALSE(r.truncated);
  // Later steps too, whatever the action.
  Rng rng(5);
  for (int t = 0; t < 50; ++t) {
    prev = env.shaping();
    Action b;
    double cost = 0;
    for (float& v : b) {
      v = static_cast<float>(rng.uniform(-1.5, 1.5));
      cost += 0.028 * std::min(1.0, std::abs(double{v}));
    }
    r = env.step(b, obs);
    if (r.terminated) break;
    CHECK(r.reward == Approx(env.shaping() - prev - cost).margin(1e-5));
  }
}

TEST_CASE("bipedal walker: actions beyond the bounds act as the bounds", "[box2d][bipedal_walker]") {
  // Motor speed follows sign(a) and torque 80·clip(|a|, 0, 1); the cost clips the same way. So (3, −7, 0, 0.4) and
  // (1, −1, 0, 0.4) give the same trajectory, and the speed of a tiny action is the full SPEED·sign(a).
  BipedalWalker a_env("box2d/BipedalWalker", {}), b_env("box2d/BipedalWalker", {});
  std::vector<float> a_obs(24), b_obs(24);
  a_env.reset(7, a_obs);
  b_env.reset(7, b_obs);
  for (int t = 0; t < 40; ++t) {
    const auto ra = a_env.step(Action{3.0f, -7.0f, 0.0f, 0.4f}, a_obs);
    const auto rb = b_env.step(Action{1.0f, -1.0f, 0.0f, 0.4f}, b_obs);
    REQUIRE(a_obs == b_obs);
    REQUIRE(ra.reward == rb.reward);
    REQUIRE(ra.terminated == rb.terminated);
    if (ra.terminated) break;
  }
  CHECK(a_env.joint(0)->GetMotorSpeed() == 4.0f);
  CHECK(a_env.joint(1)->GetMotorSpeed() == -6.0f);
  CHECK(a_env.joint(2)->GetMotorSpeed() == 0.0f);
  CHECK(a_env.joint(3)->GetMotorSpeed() == 6.0f);
  CHECK(a_env.joint(0)->GetMaxMotorTorque() == 80.0f);
  CHECK(a_env.joint(3)->GetMaxMotorTorque() == Approx(32.0f));
}

TEST_CASE("bipedal walker: invalid actions and misuse throw", "[box2d][bipedal_walker]") {
  BipedalWalker env("box2d/BipedalWalker", {});
  std::vector<float> obs(24);
  const Action zero{0, 0, 0, 0};
  CHECK_THROWS_AS(env.step(zero, obs), rlm::EnvError);  // before the first reset
  env.reset(0, obs);
  const std::vector<float> short_action{0, 0, 0};
  CHECK_THROWS_AS(env.step(short_action, obs), rlm::EnvError);
  CHECK_THROWS_AS(env.step(Action{0, NAN, 0, 0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env.step(Action{0, 0, INFINITY, 0}, obs), rlm::EnvError);
  CHECK_NOTHROW(env.step(zero, obs));  // the invalid actions changed nothing
  CHECK(env.elapsed_steps() == 1);
}

TEST_CASE("bipedal walker: a zero action collapses the walker and the fall ends the episode",
          "[box2d][bipedal_walker]") {
  // With zero torque the walker folds up and the hull touches down after 100 to 140 steps (112–123 over 200 seeds
  // before the port, docs/envs/box2d.md), return near −92; the fall replaces the step's reward with −100.
  BipedalWalker env("box2d/BipedalWalker", {});
  double total = 0;
  const int episodes = 20;
  for (uint64_t seed = 0; seed < episodes; ++seed) {
    const auto ep = play_zero(env, seed);
    INFO("seed " << seed << " length " << ep.length);
    CHECK(ep.end == WalkerEnd::fell);
    CHECK(env.game_over());
    CHECK(ep.length >= 100);
    CHECK(ep.length <= 140);
    check_terminal_step(ep, 1600);
    total += ep.episode_return;
  }
  CHECK(total / episodes == Approx(-92).margin(3));
}

TEST_CASE("bipedal walker: Box2D 2.3's limit rule lets the knees pass their limit as Gymnasium's do",
          "[box2d][bipedal_walker]") {
  // After the reset step the knees sit 0.04 below their upper limit (-0.1). Gymnasium's Box2D 2.3 enforces a limit
  // only on steps that start at or past it, so a knee action of +1 drives them to +0.71 on average (50 seeds,
  // gymnasium 1.4.0 + box2d 2.3.10; docs/RESULTS.md, "Box2D against Gymnasium"); 2.4.1's own limits hold them at
  // -0.80. The rule is emulated by default (+0.47: 2.4.1's solver then enforces it). And a walker under the stance
  // controller falls within 100-170 steps in Gymnasium; with 2.4.1's limits ours stood for the whole episode.
  for (bool emulate : {true, false}) {
    INFO("emulate_box2d23_limits " << emulate);
    BipedalWalker env("box2d/BipedalWalker", {.emulate_box2d23_limits = emulate});
    std::vector<float> obs(24);
    double knee_after = 0;
    constexpr int kSeeds = 20;
    for (int seed = 0; seed < kSeeds; ++seed) {
      env.reset(5000 + static_cast<uint64_t>(seed), obs);
      REQUIRE(obs[6] - 1.0f < -0.1f);  // obs[6] = knee angle + 1: below the upper limit after the reset step
      env.step(Action{0, 1, 0, 1}, obs);
      knee_after += (obs[6] - 1.0) / kSeeds;
    }
    if (emulate) {
      CHECK(knee_after > 0.2);  // far past the limit, as in Gymnasium (+0.71)
    } else {
      CHECK(knee_after < -0.5);  // held (-0.80)
    }
    env.reset(4, obs);
    int steps = 0;
    for (bool done = false; !done && steps < 1600; ++steps) {
      const auto r = env.step(rlm::envs::test::bipedal_walker_stand(obs), obs);
      done = r.terminated || r.truncated;
    }
    if (emulate) {
      CHECK(steps < 400);
      CHECK(env.end_cause() == WalkerEnd::fell);
    } else {
      CHECK(steps == 1600);
    }
  }
}

TEST_CASE("bipedal walker: the env truncates at 1600 and 2000 steps", "[box2d][bipedal_walker]") {
  // A walker that stands still on the start pad runs into the time limit, which truncates without
  // terminating; a further step is misuse. It stands only under Box2D 2.4.1's own joint limits: under 2.3's (the
  // default, as in Gymnasium) the stance controller falls after 100-170 steps.
  for (bool hardcore : {false, true}) {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = hardcore, .emulate_box2d23_limits = false});
    const int64_t limit = hardcore ? 2000 : 1600;
    std::vector<float> obs(24);
    env.reset(11, obs);
    INFO("hardcore " << hardcore);
    rlm::envs::StepResult r;
    int64_t t = 0;
    do {
      r = env.step(rlm::envs::test::bipedal_walker_stand(obs), obs);
      ++t;
      if (t < limit) REQUIRE_FALSE((r.terminated || r.truncated));
    } while (!(r.terminated || r.truncated));
    CHECK(t == limit);
    CHECK(r.truncated);
    CHECK_FALSE(r.terminated);
    CHECK_FALSE(r.success);
    CHECK(env.end_cause() == WalkerEnd::none);
    CHECK(env.elapsed_steps() == limit);
    CHECK_THROWS_AS(env.step(Action{0, 0, 0, 0}, obs), rlm::EnvError);
    // A new episode starts afresh.
    env.reset(12, obs);
    CHECK(env.elapsed_steps() == 0);
    CHECK_NOTHROW(env.step(Action{0, 0, 0, 0}, obs));
  }
}

TEST_CASE("bipedal walker: a fall on the last allowed step is terminated and truncated", "[box2d][bipedal_walker]") {
  BipedalWalker env("box2d/BipedalWalker", {});
  const auto full = play_zero(env, 4);
  REQUIRE(full.end == WalkerEnd::fell);
  BipedalWalker limited("box2d/BipedalWalker", {.max_episode_steps = full.length});
  const auto cut = play_zero(limited, 4);
  CHECK(cut.length == full.length);
  CHECK(cut.terminated);
  CHECK(cut.truncated);
  CHECK(cut.last_reward == -100.0f);
  CHECK(cut.end == WalkerEnd::fell);
  BipedalWalker shorter("box2d/BipedalWalker", {.max_episode_steps = full.length - 1});
  const auto early = play_zero(shorter, 4);
  CHECK(early.length == full.length - 1);
  CHECK_FALSE(early.terminated);
  CHECK(early.truncated);
  CHECK(early.end == WalkerEnd::none);
}

TEST_CASE("bipedal walker: the start pad is flat and obstacles come only in hardcore", "[box2d][bipedal_walker]") {
  // Gymnasium's generator: y_i = TH exactly for i ≤ 20 (no draw before i = 21, and sign(0) = 0); normal terrain has no
  // obstacle polygon; hardcore has obstacles for every seed (Gymnasium's test: seeds 0–4); stairs are 4 steps wide
  // (integers(4, 5)) and 1 step tall, 3 or 4 of them; stumps are squares of 1 or 2 steps; pit walls come in pairs
  // 3 or 4 steps apart.
  std::vector<float> obs(24);
  for (bool hardcore : {false, true}) {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = hardcore});
    double obstacles = 0;
    for (uint64_t seed = 0; seed < 200; ++seed) {
      env.reset(seed, obs);
      const auto& terrain = env.terrain();
      INFO("hardcore " << hardcore << " seed " << seed);
      for (int i = 0; i < bipedal::kTerrainLength; ++i) REQUIRE(terrain.x[static_cast<size_t>(i)] == i * kTS);
      for (size_t i = 0; i <= 20; ++i) REQUIRE(terrain.y[i] == kTH);
      if (!hardcore) {
        REQUIRE(terrain.obstacles.empty());
        REQUIRE(terrain.y[21] != kTH);  // the first height draw
        continue;
      }
      if (seed < 5) CHECK_FALSE(terrain.obstacles.empty());
      obstacles += static_cast<double>(terrain.obstacles.size());
      for (size_t k = 0; k < terrain.obstacles.size(); ++k) {
        const auto& o = terrain.obstacles[k];
        const auto& v = o.vertices;
        const double width = v[1][0] - v[0][0], height = v[0][1] - v[3][1];
        // Each feature's first polygon starts where it was drawn.
        if (k == 0 || terrain.obstacles[k - 1].index != o.index) REQUIRE(v[0][0] == o.index * kTS);
        switch (o.feature) {
          case TerrainFeature::stairs:
            REQUIRE(width == Approx(4 * kTS));
            REQUIRE(height == Approx(kTS));
            break;
          case TerrainFeature::stump:
            REQUIRE((width == Approx(kTS) || width == Approx(2 * kTS)));
            REQUIRE(-height == Approx(width));  // a square standing on the surface
            break;
          case TerrainFeature::pit: {
            REQUIRE(width == Approx(kTS));
            REQUIRE(height == Approx(4 * kTS));
            if (k + 1 < terrain.obstacles.size() && terrain.obstacles[k + 1].index == o.index) {
              const double gap = terrain.obstacles[k + 1].vertices[0][0] - v[0][0];
              REQUIRE((gap == Approx(3 * kTS) || gap == Approx(4 * kTS)));
              ++k;
            }
            break;
          }
        }
      }
      // The first obstacle follows the 20-step start pad at once (the counter runs out at i = 19).
      REQUIRE(terrain.obstacles.front().index == 20);
    }
    if (hardcore) {
      // 29.03 ± 1.59 per terrain, from a literal transcription of Gymnasium's loop run on 20000 terrains; the band
      // is ±4.4 standard errors at n = 200. (The pre-port measurement gave ≈29.5.)
      CHECK(obstacles / 200 == Approx(29.03).margin(0.5));
    }
  }
}

TEST_CASE("bipedal walker: injected draws give the terrain the generator prescribes", "[box2d][bipedal_walker]") {
  std::vector<float> obs(24);
  SECTION("grass") {
    // Normal: the start pad's counter runs out at i = 19 (draw 0: the next run lasts 5 steps, i = 20..24, the
    // first flat), then one height draw per grass step (i = 21..24), the next run length, a flat step at i = 25.
    BipedalWalker env("box2d/BipedalWalker", {});
    const std::vector<double> draws{5, 0.3, -0.6, 0.9, -0.2, 7, 0.45};
    env.set_draws_for_testing({.terrain = draws, .initial_force = 2.5});
    env.reset(0, obs);
    CHECK(env.initial_force() == 2.5);
    const auto& y = env.terrain().y;
    auto sign = [](double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); };
    double velocity = 0, h = kTH;
    for (size_t i = 21; i <= 24; ++i) {
      velocity = 0.8 * velocity + 0.01 * sign(kTH - h) + draws[i - 20] / 30;
      h += velocity;
      CHECK(y[i] == h);
    }
    CHECK(y[20] == kTH);
    CHECK(y[25] == y[24]);  // the oneshot grass step after the counter draw
    velocity = 0.8 * velocity + 0.01 * sign(kTH - h) + 0.45 / 30;
    CHECK(y[26] == h + velocity);
    REQUIRE(env.terrain_draws().size() > draws.size());
    for (size_t k = 0; k < draws.size(); ++k) CHECK(env.terrain_draws()[k] == draws[k]);
  }
  SECTION("stairs") {
    // Hardcore: run length 5, state STAIRS (2), random() = 0.7 > 0.5 so up, width 4, 3 steps.
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = true});
    env.set_draws_for_testing({.terrain = {5, 2, 0.7, 4, 3}});
    env.reset(0, obs);
    const auto& t = env.terrain();
    REQUIRE(t.obstacles.size() >= 3);
    for (size_t s = 0; s < 3; ++s) {
      const auto& v = t.obstacles[s].vertices;
      CHECK(t.obstacles[s].feature == TerrainFeature::stairs);
      CHECK(v[0][0] == 20 * kTS + static_cast<double>(4 * s) * kTS);
      CHECK(v[1][0] == 20 * kTS + static_cast<double>(4 * (s + 1)) * kTS);
      CHECK(v[0][1] == kTH + static_cast<double>(s) * kTS);
      CHECK(v[3][1] == kTH + (-1.0 + static_cast<double>(s)) * kTS);
    }
    CHECK((t.obstacles.size() == 3 || t.obstacles[3].index > 20));
    // The surface while the counter c runs down from 11: y = TH + ((12 − c − 1)/4)·TS at i = 32 − c.
    for (int c = 11; c >= 1; --c) CHECK(t.y[static_cast<size_t>(32 - c)] == kTH + ((12.0 - c - 1) / 4) * kTS);
  }
  SECTION("pit and stump") {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = true});
    // Run length 5, PIT (3) with counter 4: walls at i = 20 and 24, the surface 4 steps down for i = 21..24.
    env.set_draws_for_testing({.terrain = {5, 3, 4}});
    env.reset(0, obs);
    const auto& t = env.terrain();
    REQUIRE(t.obstacles.size() >= 2);
    CHECK(t.obstacles[0].vertices[0][0] == 20 * kTS);
    CHECK(t.obstacles[1].vertices[0][0] == 20 * kTS + kTS * 4);
    for (size_t i = 21; i <= 24; ++i) CHECK(t.y[i] == kTH - 4 * kTS);
    CHECK(t.y[25] == kTH);
    // Run length 5, STUMP (1) of size 2.
    env.set_draws_for_testing({.terrain = {5, 1, 2}});
    env.reset(0, obs);
    REQUIRE_FALSE(env.terrain().obstacles.empty());
    const auto& stump = env.terrain().obstacles[0];
    CHECK(stump.feature == TerrainFeature::stump);
    CHECK(stump.vertices[2][0] == 20 * kTS + 2 * kTS);
    CHECK(stump.vertices[2][1] == kTH + 2 * kTS);
  }
  SECTION("invalid integer draws are refused") {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = true});
    env.set_draws_for_testing({.terrain = {10}});  // integers(5, 10) excludes 10
    CHECK_THROWS_AS(env.reset(0, obs), rlm::EnvError);
    env.set_draws_for_testing({.terrain = {5, 4}});  // integers(1, 4): no state 4
    CHECK_THROWS_AS(env.reset(0, obs), rlm::EnvError);
    env.set_draws_for_testing({.terrain = {5.5}});
    CHECK_THROWS_AS(env.reset(0, obs), rlm::EnvError);
  }
  SECTION("a recorded draw sequence reproduces its terrain on another seed") {
    for (bool hardcore : {false, true}) {
      BipedalWalker env("box2d/BipedalWalker", {.hardcore = hardcore});
      env.reset(21, obs);
      const auto terrain = env.terrain();
      const double force = env.initial_force();
      const std::vector<float> first_obs = obs;
      env.set_draws_for_testing({.terrain = env.terrain_draws(), .initial_force = force});
      env.reset(99, obs);
      CHECK(env.terrain().y == terrain.y);
      REQUIRE(env.terrain().obstacles.size() == terrain.obstacles.size());
      for (size_t k = 0; k < terrain.obstacles.size(); ++k)
        CHECK(env.terrain().obstacles[k].vertices == terrain.obstacles[k].vertices);
      CHECK(obs == first_obs);  // same terrain and push: same reset step
      env.set_draws_for_testing({});
      env.reset(99, obs);
      CHECK(env.terrain().y != terrain.y);
    }
  }
}

TEST_CASE("bipedal walker: rollouts are a function of the seed", "[box2d][bipedal_walker]") {
  // The world is rebuilt every reset, so the same seed and actions give the same rollout bit for bit, in a
  // fresh env or one that has played other episodes; different seeds give different terrain.
  for (bool hardcore : {false, true}) {
    INFO("hardcore " << hardcore);
    auto record = [](BipedalWalker& env, uint64_t seed) {
      std::vector<float> obs(24), trace;
      env.reset(seed, obs);
      trace.insert(trace.end(), obs.begin(), obs.end());
      Rng rng(77);
      for (int t = 0; t < 300; ++t) {
        Action a;
        for (float& v : a) v = static_cast<float>(rng.uniform(-1, 1));
        const auto r = env.step(a, obs);
        trace.insert(trace.end(), obs.begin(), obs.end());
        trace.push_back(r.reward);
        if (r.terminated || r.truncated) break;
      }
      return trace;
    };
    BipedalWalker a("box2d/BipedalWalker", {.hardcore = hardcore}), b("box2d/BipedalWalker", {.hardcore = hardcore});
    const auto first = record(a, 5);
    record(b, 6);
    play_heuristic(b, 7);
    const auto again = record(b, 5);
    REQUIRE(first.size() == again.size());
    CHECK(std::memcmp(first.data(), again.data(), first.size() * sizeof(float)) == 0);
    std::vector<float> obs(24);
    a.reset(5, obs);
    const auto y5 = a.terrain().y;
    const double f5 = a.initial_force();
    a.reset(6, obs);
    CHECK(a.terrain().y != y5);
    CHECK(a.initial_force() != f5);
  }
}

TEST_CASE("bipedal walker: the Box2D 2.3 wake emulation wakes a resting walker", "[box2d][bipedal_walker]") {
  // With a constant action the walker comes to rest and its island falls asleep. Box2D 2.4.1's motor setters
  // then never wake it (the values do not change), so without the emulation it sleeps for good; pybox2d's 2.3
  // setters wake it every step, and the emulation does the same: a sleeping walker is awake again after the next
  // step (it needs another 0.5 s at rest to fall asleep).
  const Action rest{0.3f, 0.5f, -0.3f, 0.5f};
  for (bool emulate : {false, true}) {
    INFO("emulate " << emulate);
    // A walker at rest for 600 steps exists only under 2.4.1's joint limits (under 2.3's it falls, as Gymnasium's).
    BipedalWalker env("box2d/BipedalWalker", {.emulate_box2d23_wake = emulate, .emulate_box2d23_limits = false});
    std::vector<float> obs(24);
    env.reset(3, obs);
    int first_asleep = -1, asleep = 0, woken = 0;
    bool was_asleep = false;
    for (int t = 0; t < 600; ++t) {
      const auto r = env.step(rest, obs);
      REQUIRE_FALSE((r.terminated || r.truncated));
      const bool sleeping = !env.hull()->IsAwake();
      if (sleeping && first_asleep < 0) first_asleep = t;
      asleep += sleeping;
      woken += was_asleep && !sleeping;
      was_asleep = sleeping;
    }
    REQUIRE(first_asleep >= 0);
    REQUIRE(first_asleep < 300);
    if (emulate) {
      CHECK(woken > 0);
      CHECK(asleep == woken + (was_asleep ? 1 : 0));  // every sleeping step is followed by an awake one
      CHECK(asleep >= 2);
    } else {
      CHECK(woken == 0);
      CHECK(asleep == 600 - first_asleep);
    }
  }
}

TEST_CASE("bipedal walker: heuristic returns match Gymnasium", "[box2d][bipedal_walker][statistical][slow]") {
  // n = 200 fixed seeds per cell. Gymnasium on pybox2d (as envpool's tests record it, docs/envs/box2d.md): normal
  // 102.65 ± 125.08 (bimodal: it falls or walks far), hardcore −59.22 ± 25.21; the pre-port 2.4.1 prototype 113.09
  // and −62.96. A wrong hip referenceAngle gives ≈ 280.
  for (bool hardcore : {false, true}) {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = hardcore});
    Summary summary;
    for (uint64_t e = 0; e < 200; ++e) {
      const auto ep = play_heuristic(env, 1000 + e);
      check_terminal_step(ep, env.max_episode_steps());
      summary.add(ep);
    }
    INFO("hardcore " << hardcore << ": mean " << summary.mean() << " sd " << summary.sd() << " length "
                     << summary.length / summary.n << " fell " << summary.fell << " finished " << summary.finished
                     << " truncated " << summary.truncated);
    if (hardcore) {
      CHECK(summary.mean() >= -72);
      CHECK(summary.mean() <= -50);
      CHECK(summary.fell >= 180);  // the prototype: 96.4% end on hull contact
    } else {
      CHECK(summary.mean() >= 60);
      CHECK(summary.mean() <= 170);
      CHECK(summary.finished > 0);  // the prototype: 13.1% reach the end
      CHECK(summary.fell > 100);    // and 76.2% fall
    }
  }
}

TEST_CASE("bipedal walker: random-policy returns match the pre-port measurement",
          "[box2d][bipedal_walker][statistical][slow]") {
  // U[−1, 1]⁴ actions; the pre-port 2.4.1 prototype (docs/envs/box2d.md) gave −100.1 ± 15.0 (normal) and
  // −109.9 ± 14.8 (hardcore).
  for (bool hardcore : {false, true}) {
    BipedalWalker env("box2d/BipedalWalker", {.hardcore = hardcore});
    Summary summary;
    for (uint64_t e = 0; e < 200; ++e) {
      const auto ep = play_random(env, 1000 + e, 50000 + e);
      check_terminal_step(ep, env.max_episode_steps());
      summary.add(ep);
    }
    INFO("hardcore " << hardcore << ": mean " << summary.mean() << " sd " << summary.sd() << " length "
                     << summary.length / summary.n << " fell " << summary.fell << " truncated " << summary.truncated);
    CHECK(summary.finished == 0);
    if (hardcore) {
      CHECK(summary.mean() >= -115);
      CHECK(summary.mean() <= -105);
    } else {
      CHECK(summary.mean() >= -105);
      CHECK(summary.mean() <= -95);
    }
  }
}
