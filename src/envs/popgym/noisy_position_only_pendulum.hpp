// Memory skill: filter noisy angle readings over time and infer the angular velocity from them (gymnasium Pendulum with
// theta_dot removed and Gaussian noise on cos and sin). Follows popgym/envs/noisy_position_only_pendulum.py
// ("NoisyStatelessPendulum" in the POPGym paper) on top of position_only_pendulum.py and gymnasium's
// classic_control/pendulum.py.
#pragma once
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "envs/env.hpp"
#include "envs/popgym/observation_noise.hpp"
#include "envs/popgym/pendulum_physics.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct NoisyPositionOnlyPendulumConfig {
  double noise_sigma = 0.1;      ///< standard deviation of the Gaussian noise on each obs component
  int max_episode_length = 200;  ///< L (200 at every difficulty upstream): truncated at step L, never terminated
};

/// obs = clip([cos theta, sin theta] + N(0, sigma^2), -1, 1) as float32, with fresh noise at reset and after every
/// step; rewards use the true state. Action Box(-2, 2, (1,)) torque, clipped as gymnasium does.
class NoisyPositionOnlyPendulum final : public Env {
 public:
  static constexpr float kObsLow[2] = {-1.0f, -1.0f};
  static constexpr float kObsHigh[2] = {1.0f, 1.0f};

  NoisyPositionOnlyPendulum(std::string id, NoisyPositionOnlyPendulumConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return sim_.max_episode_length(); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;
  /// gymnasium Pendulum's Box([-1, -1, -8], [1, 1, 8]); the state is the noise-free [cos theta, sin theta,
  /// theta_dot] as float32.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override { sim_.write_state(state); }

  /// Test hook for the golden replays: start the episode from the state and the reset noise popgym drew
  /// ({"state": [theta, theta_dot], "noise": [n_cos, n_sin]}, see
  /// scripts/popgym_golden/noisy_position_only_pendulum.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs);
  /// Test hook: the next step() adds exactly these two noise values (numpy's normal(0, sigma) outputs) to the obs.
  void inject_draws(std::span<const double> draws) { noise_.inject(draws, id_); }

  double theta() const { return sim_.theta(); }
  double theta_dot() const { return sim_.theta_dot(); }
  int steps() const { return sim_.steps(); }
  double noise_sigma() const { return noise_.sigma(); }

 private:
  void write_obs(std::span<float> obs);  // true [cos, sin] plus one draw of noise

  std::string id_;
  Space observation_space_ = Space::box({kObsLow[0], kObsLow[1]}, {kObsHigh[0], kObsHigh[1]});
  Space action_space_ = PendulumSim::action_space();
  Space state_space_ = PendulumSim::state_space();
  PendulumSim sim_;
  ObservationNoise noise_;
  Rng rng_;
};

}  // namespace rlm::envs::popgym
