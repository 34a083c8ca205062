// LunarLander-v3 and -Continuous-v3 (Farama-Foundation/Gymnasium@3f0476a:gymnasium/envs/box2d/lunar_lander.py)
// ported onto Box2D 2.4.1 (port notes: docs/envs/box2d.md). A lander drops from the top centre of a 20 × 13.33 m
// moon with a random push and must come to rest on the pad between x = 8 and x = 12. Every Gymnasium quirk is kept:
//   - reset() runs one physics step with a null action (2 dispersion draws, wind advances, prev_shaping set; its
//     reward is discarded, and it is not an agent step);
//   - terrain: 12 heights drawn, h[3..7] set to H/4, smoothed with 0.33 (not 1/3) and h[−1] = h[11] (Python's
//     wrap-around), so the pad lies at 0.99·H/4 while the observation's y origin uses H/4;
//   - the leg boxes take LEG_W/LEG_H as half-extents, leg friction is the default 0.2, and the leg joints get
//     referenceAngle = ±0.05 (pybox2d sets bodyB.angle − bodyA.angle); their anchors start 0.63 m apart;
//   - the side engine's 17-vs-14 px lever (lunar_lander_forces.hpp);
//   - the terminal rewards −100 (body contact or |x| ≥ 1) and +100 (the lander's island fell asleep) replace the
//     step's reward; contact flags are booleans set and cleared by Begin/EndContact, not counters;
//   - a new b2World every reset (Gymnasium v3's fix for non-determinism); no exhaust particles (render only).
// Randomness: the framework Rng (reseeded by reset's seed) in Gymnasium's draw order, not numpy's stream;
// set_draws_for_testing() substitutes chosen values for any group of draws.
// Differences from Gymnasium that cannot be removed: Box2D 2.4.1's revolute-joint and edge-polygon solvers
// differ from pybox2d's 2.3 (only 2.3's joint-limit rule is emulated, box2d23_limits.hpp), so trajectories agree
// with Gymnasium only statistically (the bands of docs/envs/box2d.md); random play scores about 25 lower
// (docs/RESULTS.md, "Box2D against Gymnasium").
// Unlike Gymnasium (whose TimeLimit wrapper does it), the env truncates itself after max_episode_steps agent steps,
// also on a step that terminates (both flags set then).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/rng.hpp"

class b2World;
class b2Body;
class b2RevoluteJoint;

namespace rlm::envs::box2d {

class ContactDetector;

struct LunarLanderConfig {
  bool continuous = false;         ///< Box(2) actions (main, lateral) in [−1, 1] instead of Discrete(4)
  double gravity = -10.0;          ///< m/s², must lie in (−12, 0) as Gymnasium asserts
  bool enable_wind = false;        ///< wind force and turbulence torque while neither leg touches the ground
  double wind_power = 15.0;        ///< N; Gymnasium warns outside [0, 20] but accepts it
  double turbulence_power = 1.5;   ///< N·m; Gymnasium warns outside [0, 2] but accepts it
  double initial_random = 1000.0;  ///< the reset push: a force of U(−r, r) N on each axis for one step
  int64_t max_episode_steps = 1000;
  /// Enable each leg joint's limit only on steps that start with the joint at or past it, as Box2D 2.3 does
  /// (box2d23_limits.hpp).
  bool emulate_box2d23_limits = true;
};

/// How the episode ended, for tests and logging.
enum class LanderEnd {
  none,           ///< still running, or cut by the time limit
  crashed,        ///< the lander body touched the moon (−100)
  out_of_bounds,  ///< |x| ≥ 1 in observation units, i.e. left the 20 m wide screen (−100)
  landed,         ///< the lander and legs fell asleep (+100); the only success
};

/// Values that replace the Rng's draws (test hooks). Every draw is still taken from the Rng, in
/// Gymnasium's order, and then replaced, so overriding one group leaves all the others as they were for that seed.
struct LunarLanderDraws {
  std::optional<std::array<double, 12>> heights;       ///< terrain h[0..11] in m (normally U(0, H/2))
  std::optional<std::array<double, 2>> initial_force;  ///< the reset push (fx, fy) in N
  std::optional<std::array<int64_t, 2>> wind_indices;  ///< wind_idx, torque_idx as drawn at reset (wind only)
  std::optional<std::array<double, 2>> dispersion;     ///< the two U(−1, 1) draws of every step, before the /30
};

/// A fixture as Box2D holds it, for tests of Gymnasium's fixture constants.
struct LanderFixtureInfo {
  float friction, restitution, density;
  uint16_t category, mask;
};

/// A leg joint as Box2D holds it, for tests of the leg joints (referenceAngle included).
struct LanderJointInfo {
  float reference_angle, lower_angle, upper_angle, max_motor_torque, motor_speed;
  std::array<float, 2> local_anchor_a, local_anchor_b;
  bool motor_enabled, limit_enabled;
};

class LunarLander final : public Env {
 public:
  using Config = LunarLanderConfig;
  static constexpr int kChunks = 11;

  LunarLander(std::string id, LunarLanderConfig config);
  ~LunarLander() override;
  LunarLander(const LunarLander&) = delete;
  LunarLander& operator=(const LunarLander&) = delete;

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return config_.max_episode_steps; }
  bool reports_success() const override { return true; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  const LunarLanderConfig& config() const { return config_; }

  /// Test hook: draws to substitute from the next reset() on, until replaced (an empty struct restores the Rng's).
  void set_draws_for_testing(const LunarLanderDraws& draws) { draws_ = draws; }

  // Read-only views of the episode, for tests.
  LanderEnd end_cause() const { return end_; }
  int64_t elapsed_steps() const { return t_; }  ///< agent steps since reset (the reset step excluded)
  const std::array<double, kChunks>& terrain_y() const { return smooth_y_; }  ///< smooth_y at x = 2i
  /// The moon's 11 edges (x1, y1, x2, y2) as Box2D stores them, base edge first, then the terrain left to right.
  std::vector<std::array<float, 4>> moon_edges() const;
  /// The moon's fixtures (creation order), then the lander's, leg 0's and leg 1's.
  std::vector<LanderFixtureInfo> fixtures() const;
  LanderJointInfo leg_joint(int leg) const;
  /// A leg's world angle minus the lander's: about +0.35 rad for leg 0 once its joint rests on the 0.4 limit
  /// (joint angle = leg − lander − referenceAngle).
  double leg_angle(int leg) const;
  double lander_mass() const;
  double leg_mass(int leg) const;
  bool lander_awake() const;
  bool leg_contact(int leg) const;
  int64_t wind_index() const { return wind_idx_; }  ///< the next wind_idx to use (advances only while airborne)
  int64_t torque_index() const { return torque_idx_; }

 private:
  /// Gymnasium's step() minus the terminal rules: wind, engines (main power m, side direction ±1 and power s; 0 for
  /// off), physics, observation. Returns the shaping reward less fuel; the contact detector records a crash.
  double simulate(double main_power, double side_direction, double side_power, std::span<float> obs);
  void build_world();

  std::string id_;
  LunarLanderConfig config_;
  Space observation_space_;
  Space action_space_;
  Rng rng_;
  LunarLanderDraws draws_;

  // The listener outlives the world that points to it (members are destroyed in reverse order).
  std::unique_ptr<ContactDetector> contacts_;
  std::unique_ptr<b2World> world_;
  b2Body* moon_ = nullptr;
  b2Body* lander_ = nullptr;
  std::array<b2Body*, 2> legs_{};
  std::array<b2RevoluteJoint*, 2> joints_{};

  std::array<double, kChunks> smooth_y_{};
  std::array<double, 8> state_{};  ///< the last observation in double, before the float32 cast
  std::optional<double> prev_shaping_;
  int64_t wind_idx_ = 0, torque_idx_ = 0;
  int64_t t_ = 0;
  LanderEnd end_ = LanderEnd::none;
  bool running_ = false;
};

}  // namespace rlm::envs::box2d
