// Memory skill: integrate velocities over time to track positions (CartPole with x and theta removed). Follows
// popgym/envs/velocity_only_cartpole.py (added in v1.0.3, not in the POPGym paper) on top of gymnasium's
// classic_control/cartpole.py. Registered upstream as popgym-VelocityOnlyCartpole<Level>-v0 (lowercase p), hence our
// ids popgym/VelocityOnlyCartpole<Level>.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/popgym/cartpole_physics.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct VelocityOnlyCartPoleConfig {
  int max_episode_length = 200;  ///< L: truncated at step L; every surviving step pays 1/L
  /// Upstream quirk: reset() returns the *positions* [x, theta] while every step returns the velocities [x_dot,
  /// theta_dot]. false mirrors upstream; true fixes it (the reset obs holds the velocities too).
  bool reset_obs_velocities = false;
};

/// obs = [x_dot, theta_dot] as float32 in Box(-inf, inf) (the reset obs holds [x, theta] unless
/// reset_obs_velocities); action Discrete(2): 1 pushes right with +10 N, 0 left with -10 N.
class VelocityOnlyCartPole final : public Env {
 public:
  VelocityOnlyCartPole(std::string id, VelocityOnlyCartPoleConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return sim_.max_episode_length(); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;
  /// gymnasium CartPole's Box(+-[4.8, inf, 0.41887903, inf]); the state is [x, x_dot, theta, theta_dot] as float32.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override { sim_.write_state(state); }

  /// Test hook for the golden replays: start the episode from the float64 state popgym drew at reset
  /// ({"state": [x, x_dot, theta, theta_dot]}, see scripts/popgym_golden/velocity_only_cartpole.py) and write the
  /// reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs);

  /// The full float64 state [x, x_dot, theta, theta_dot].
  const std::array<double, 4>& state() const { return sim_.state(); }
  int steps() const { return sim_.steps(); }

 private:
  void write_reset_obs(std::span<float> obs) const;

  std::string id_;
  Space observation_space_;
  Space action_space_ = Space::discrete(2);
  Space state_space_ = CartPoleSim::state_space();
  CartPoleSim sim_;
  bool reset_obs_velocities_;
  Rng rng_;
};

}  // namespace rlm::envs::popgym
