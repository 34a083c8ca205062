// Memory skill: estimate velocities by integrating positions over time (CartPole with x_dot and theta_dot removed).
// Follows popgym/envs/position_only_cartpole.py ("StatelessCartPole" in the paper) on top of gymnasium's
// classic_control/cartpole.py (envs.md A.10 and D.1).
#pragma once
#include <array>
#include <string>

#include "envs/env.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct PositionOnlyCartPoleConfig {
  int max_episode_length = 200;  ///< L: truncated at step L; every surviving step pays 1/L
};

/// obs = [x, theta] as float32; action Discrete(2): 1 pushes right with +10 N, 0 left with -10 N.
class PositionOnlyCartPole final : public Env {
 public:
  // gymnasium CartPole constants, in its names.
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassPole + kMassCart;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;  // seconds per step, explicit Euler
  static constexpr double kThetaThresholdRadians = 12 * 2 * 3.14159265358979323846 / 360;
  static constexpr double kXThreshold = 2.4;
  /// Obs bounds: twice the termination thresholds, as upstream. Obs are not clipped; they stay inside until the
  /// episode terminates.
  static constexpr float kObsHigh[2] = {static_cast<float>(kXThreshold * 2),
                                        static_cast<float>(kThetaThresholdRadians * 2)};

  PositionOnlyCartPole(std::string id, PositionOnlyCartPoleConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return max_episode_length_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// The full float64 state [x, x_dot, theta, theta_dot] (popgym's get_state, before its float32 cast).
  const std::array<double, 4>& state() const { return state_; }
  int steps() const { return steps_; }

 private:
  std::string id_;
  Space observation_space_ = Space::box({-kObsHigh[0], -kObsHigh[1]}, {kObsHigh[0], kObsHigh[1]});
  Space action_space_ = Space::discrete(2);
  int max_episode_length_;
  float reward_scale_;
  Rng rng_;
  std::array<double, 4> state_{};
  int steps_ = 0;
  bool has_state_ = false;  // gymnasium asserts that reset() came first
  bool fallen_ = false;     // gymnasium's steps_beyond_terminated is not None
};

}  // namespace rlm::envs::popgym
