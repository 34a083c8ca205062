// Memory skill: filter noisy position readings over time and infer the velocities from them (CartPole with x_dot and
// theta_dot removed and Gaussian noise on x and theta). Follows popgym/envs/noisy_position_only_cartpole.py
// ("NoisyStatelessCartPole" in the POPGym paper) on top of position_only_cartpole.py and gymnasium's
// classic_control/cartpole.py.
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <span>
#include <string>

#include "envs/env.hpp"
#include "envs/popgym/cartpole_physics.hpp"
#include "envs/popgym/observation_noise.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct NoisyPositionOnlyCartPoleConfig {
  double noise_sigma = 0.1;      ///< standard deviation of the Gaussian noise on each obs component
  int max_episode_length = 200;  ///< L (200 at every difficulty upstream): truncated at step L, each step pays 1/L
};

/// obs = clip([x, theta] + N(0, sigma^2), -[4.8, 0.41887903], [4.8, 0.41887903]) as float32, with fresh noise at
/// reset and after every step; rewards and termination use the true state. Action Discrete(2) as in CartPole.
class NoisyPositionOnlyCartPole final : public Env {
 public:
  static constexpr float kObsHigh[2] = {CartPoleSim::kXHigh, CartPoleSim::kThetaHigh};
  static constexpr float kObsLow[2] = {-CartPoleSim::kXHigh, -CartPoleSim::kThetaHigh};

  NoisyPositionOnlyCartPole(std::string id, NoisyPositionOnlyCartPoleConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return sim_.max_episode_length(); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;
  /// gymnasium CartPole's Box(+-[4.8, inf, 0.41887903, inf]); the state is the noise-free [x, x_dot, theta,
  /// theta_dot] as float32.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override { sim_.write_state(state); }

  /// Test hook for the golden replays: start the episode from the state and the reset noise popgym drew
  /// ({"state": [x, x_dot, theta, theta_dot], "noise": [n_x, n_theta]}, see
  /// scripts/popgym_golden/noisy_position_only_cart_pole.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs);
  /// Test hook: the next step() adds exactly these two noise values (numpy's normal(0, sigma) outputs) to the obs.
  void inject_draws(std::span<const double> draws) { noise_.inject(draws, id_); }

  /// The full float64 state [x, x_dot, theta, theta_dot].
  const std::array<double, 4>& state() const { return sim_.state(); }
  int steps() const { return sim_.steps(); }
  double noise_sigma() const { return noise_.sigma(); }

 private:
  void write_obs(std::span<float> obs);  // true positions plus one draw of noise

  std::string id_;
  Space observation_space_ = Space::box({kObsLow[0], kObsLow[1]}, {kObsHigh[0], kObsHigh[1]});
  Space action_space_ = Space::discrete(2);
  Space state_space_ = CartPoleSim::state_space();
  CartPoleSim sim_;
  ObservationNoise noise_;
  Rng rng_;
};

}  // namespace rlm::envs::popgym
