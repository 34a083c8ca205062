// Memory skill: estimate velocities by integrating positions over time (CartPole with x_dot and theta_dot removed).
// Follows popgym/envs/position_only_cartpole.py ("StatelessCartPole" in the POPGym paper) on top of gymnasium's
// classic_control/cartpole.py.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/popgym/cartpole_physics.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct PositionOnlyCartPoleConfig {
  int max_episode_length = 200;  ///< L: truncated at step L; every surviving step pays 1/L
};

/// obs = [x, theta] as float32; action Discrete(2): 1 pushes right with +10 N, 0 left with -10 N.
class PositionOnlyCartPole final : public Env {
 public:
  /// Obs bounds: twice the termination thresholds, as upstream. Obs are not clipped; they stay inside until the
  /// episode terminates.
  static constexpr float kObsHigh[2] = {CartPoleSim::kXHigh, CartPoleSim::kThetaHigh};

  PositionOnlyCartPole(std::string id, PositionOnlyCartPoleConfig config);

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
  /// ({"state": [x, x_dot, theta, theta_dot]}, see scripts/popgym_golden/position_only_cart_pole.py) and write the
  /// reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs);

  /// The full float64 state [x, x_dot, theta, theta_dot] (popgym's get_state, before its float32 cast).
  const std::array<double, 4>& state() const { return sim_.state(); }
  int steps() const { return sim_.steps(); }

 private:
  void write_obs(std::span<float> obs) const;

  std::string id_;
  Space observation_space_ = Space::box({-kObsHigh[0], -kObsHigh[1]}, {kObsHigh[0], kObsHigh[1]});
  Space action_space_ = Space::discrete(2);
  Space state_space_ = CartPoleSim::state_space();
  CartPoleSim sim_;
  Rng rng_;
};

}  // namespace rlm::envs::popgym
