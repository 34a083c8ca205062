// BipedalWalker-v3 and -Hardcore-v3 (Farama-Foundation/Gymnasium@3f0476a:gymnasium/envs/box2d/bipedal_walker.py)
// ported onto Box2D 2.4.1 (port notes: docs/envs/box2d.md). A five-body walker (hull, two upper and two lower legs,
// four motorised revolute joints) must cross 200 terrain points (≈93 m) of grass, and in hardcore also stumps, stairs
// and pits, seeing its own joint state, two foot contacts and 10 world-fixed lidar rays. Gymnasium's quirks are kept:
//   - reset() runs one physics step with a zero action (it sets prev_shaping; its reward is discarded, and it is not
//     an agent step), so the creation-time motor values never act;
//   - the hip joints get referenceAngle = ±0.05 and the knees 0 (pybox2d sets bodyB.angle − bodyA.angle; left at
//     Box2D's default 0 the hip observations shift and the heuristic's return more than doubles);
//   - the leg positions subtract LEG_DOWN where the hip anchors add it, so the anchors start 0.53 m apart and the
//     reset step snaps them together; the knees start above their upper limit (the initial bend);
//   - the leg boxes use half-extents (LEG_W/2, LEG_H/2) and (0.8·LEG_W/2, LEG_H/2), friction the default 0.2;
//   - terrain edges are two-sided edges, one static body each (no chain, no ghost vertices);
//   - motors are torque-controlled through a saturated velocity motor: speed = SPEED·sign(a), max torque =
//     80·clip(|a|, 0, 1); actions are not otherwise clipped (the action cost clips |a| the same way);
//   - falling (the hull touches anything) and leaving on the left replace the step reward with −100; passing
//     x = 190·TS ends the episode without a bonus; contact flags are booleans set and cleared by Begin/EndContact.
// Port decisions (reasons: docs/envs/box2d.md): a new b2World every reset (Gymnasium reuses one); any sleeping walker
// body is woken after the motors are set, since 2.4.1's setters wake bodies only on a change of value where pybox2d's
// 2.3 always did; randomness from the framework Rng in Gymnasium's draw order, clouds skipped.
// 2.3's joint-limit rule is emulated too (box2d23_limits.hpp): with 2.4.1's own limits the knees hold at their limit
// and a walker can stand still for a whole episode, which Gymnasium's cannot. Differences that cannot be removed:
// 2.4.1's revolute-joint and edge-polygon solvers differ from 2.3's, so trajectories match Gymnasium only
// statistically (the bands of docs/envs/box2d.md; the shifts measured: docs/RESULTS.md, "Box2D against Gymnasium").
// Unlike Gymnasium (whose TimeLimit wrapper does it), the env truncates itself after max_episode_steps agent steps,
// also on a step that terminates (both flags set then).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/box2d/bipedal_terrain.hpp"
#include "envs/env.hpp"
#include "envs/rng.hpp"

class b2World;
class b2Body;
class b2RevoluteJoint;

namespace rlm::envs::box2d {

class ContactDetector;

struct BipedalWalkerConfig {
  bool hardcore = false;          ///< stumps, stairs and pits (BipedalWalkerHardcore-v3)
  int64_t max_episode_steps = 0;  ///< 0: the registered limit, 1600 normal and 2000 hardcore
  /// Wake sleeping walker bodies after setting the motors each step, as pybox2d's Box2D 2.3 setters do.
  bool emulate_box2d23_wake = true;
  /// Enable each joint limit only on steps that start with the joint at or past it, as Box2D 2.3 does
  /// (box2d23_limits.hpp).
  bool emulate_box2d23_limits = true;
};

/// How the episode ended, for tests and logging.
enum class WalkerEnd {
  none,           ///< still running, or cut by the time limit
  fell,           ///< the hull touched the ground or an obstacle (−100)
  out_of_bounds,  ///< the hull's origin went left of x = 0 (−100)
  finished,       ///< the hull's origin passed x = 190·TS = 88.67 m, the end of the course; the only success
};

/// Values that replace the Rng's draws (a test hook). Every draw is still taken from the Rng, in Gymnasium's
/// order, and then replaced, so injecting one group leaves the others as they were for that seed.
struct BipedalWalkerDraws {
  /// The terrain generator's draws in call order, as numpy's calls return them (see bipedal::TerrainDraws); replaces
  /// the first terrain.size() draws, the rest come from the Rng. Gymnasium's own stream puts the 110 cloud draws
  /// between the terrain and the push: leave them out.
  std::vector<double> terrain{};
  std::optional<double> initial_force{};  ///< the hull's reset push along x in N (normally U(−5, 5))
};

class BipedalWalker final : public Env {
 public:
  using Config = BipedalWalkerConfig;
  static constexpr int kObsDim = 24;
  static constexpr int kActionDim = 4;
  static constexpr int kLidarRays = 10;

  BipedalWalker(std::string id, BipedalWalkerConfig config);
  ~BipedalWalker() override;
  BipedalWalker(const BipedalWalker&) = delete;
  BipedalWalker& operator=(const BipedalWalker&) = delete;

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return max_steps_; }
  bool reports_success() const override { return true; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  const BipedalWalkerConfig& config() const { return config_; }

  /// Test hook: draws to substitute from the next reset() on, until replaced (an empty struct restores the Rng's).
  void set_draws_for_testing(BipedalWalkerDraws draws) { draws_ = std::move(draws); }

  // Read-only views of the episode, for tests.
  WalkerEnd end_cause() const { return end_; }
  int64_t elapsed_steps() const { return t_; }  ///< agent steps since reset (the reset step excluded)
  const bipedal::WalkerTerrain& terrain() const { return terrain_; }
  /// The terrain draws the last reset used, in order (injected or drawn): feeding them back reproduces the terrain.
  const std::vector<double>& terrain_draws() const { return terrain_draws_; }
  double initial_force() const { return initial_force_; }  ///< the last reset's push (N)
  bool game_over() const;
  bool leg_contact(int leg) const;  ///< lower leg 0 or 1
  /// The last step's shaping, 130·x/30 − 5·|θ|, as Gymnasium's prev_shaping holds it.
  double shaping() const { return prev_shaping_.value_or(0.0); }
  // The walker's bodies and the world, in Gymnasium's list order: legs = [upper₋, lower₋, upper₊, lower₊],
  // joints = [hip₋, knee₋, hip₊, knee₊]. Null before the first reset.
  const b2World* world() const { return world_.get(); }
  const b2Body* hull() const { return hull_; }
  const b2Body* leg(int k) const { return legs_[static_cast<size_t>(k)]; }
  const b2RevoluteJoint* joint(int k) const { return joints_[static_cast<size_t>(k)]; }

 private:
  class LidarCallback;

  void build_world();
  /// Gymnasium's step() minus the time limit: motors, physics, lidar, observation, reward and termination.
  /// Returns the reward (after the terminal rule) and sets terminated_/end_.
  double simulate(const std::array<double, kActionDim>& action, std::span<float> obs);

  std::string id_;
  BipedalWalkerConfig config_;
  int64_t max_steps_;
  Space observation_space_;
  Space action_space_;
  Rng rng_;
  BipedalWalkerDraws draws_;

  bipedal::WalkerTerrain terrain_;
  std::vector<double> terrain_draws_;
  double initial_force_ = 0.0;

  // The listener outlives the world that points to it (members are destroyed in reverse order).
  std::unique_ptr<ContactDetector> contacts_;
  std::unique_ptr<b2World> world_;
  b2Body* hull_ = nullptr;
  std::array<b2Body*, 4> legs_{};
  std::array<b2RevoluteJoint*, 4> joints_{};

  std::optional<double> prev_shaping_;
  int64_t t_ = 0;
  WalkerEnd end_ = WalkerEnd::none;
  bool terminated_ = false;
  bool running_ = false;
};

}  // namespace rlm::envs::box2d
