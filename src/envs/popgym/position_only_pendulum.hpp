// Memory skill: estimate the angular velocity from successive angles to swing up and balance a pendulum (gymnasium
// Pendulum with theta_dot removed). Follows popgym/envs/position_only_pendulum.py ("StatelessPendulum" in the POPGym
// paper) on top of gymnasium's classic_control/pendulum.py.
#pragma once
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "envs/env.hpp"
#include "envs/popgym/pendulum_physics.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct PositionOnlyPendulumConfig {
  int max_episode_length = 200;  ///< L: truncated at step L, never terminated (shorter is harder)
};

/// obs = [cos theta, sin theta] as float32 in Box([-1, -1], [1, 1]); action Box(-2, 2, (1,)) torque, clipped to
/// [-2, 2] as gymnasium does (only a wrong size or NaN is invalid); reward in [-1/L, 1/L] per step, about +1/L while
/// the pole is held upright.
class PositionOnlyPendulum final : public Env {
 public:
  PositionOnlyPendulum(std::string id, PositionOnlyPendulumConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return sim_.max_episode_length(); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;
  /// gymnasium Pendulum's Box([-1, -1, -8], [1, 1, 8]); the state is [cos theta, sin theta, theta_dot] as float32.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override { sim_.write_state(state); }

  /// Test hook for the golden replays: start the episode from the float64 state popgym drew at reset
  /// ({"state": [theta, theta_dot]}, see scripts/popgym_golden/position_only_pendulum.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs);

  double theta() const { return sim_.theta(); }
  double theta_dot() const { return sim_.theta_dot(); }
  int steps() const { return sim_.steps(); }

 private:
  void write_obs(std::span<float> obs) const;

  std::string id_;
  Space observation_space_ = Space::box({-1.0f, -1.0f}, {1.0f, 1.0f});
  Space action_space_ = PendulumSim::action_space();
  Space state_space_ = PendulumSim::state_space();
  PendulumSim sim_;
  Rng rng_;
};

}  // namespace rlm::envs::popgym
