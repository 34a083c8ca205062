// Shared by PositionOnlyPendulum and NoisyPositionOnlyPendulum: gymnasium's Pendulum
// (Farama-Foundation/Gymnasium@3f0476a:gymnasium/envs/classic_control/pendulum.py) plus popgym's reward transform and
// truncation. Header-only: step() runs once per env step.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>

#include "core/error.hpp"
#include "envs/env.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

/// The float64 state (theta, theta_dot), theta = 0 upright and never wrapped; the float32 obs
/// [cos theta, sin theta, theta_dot] that gymnasium returns (popgym's get_state); reward
/// ((-cost + 8.1368022) / 8.1368022) / L in [-1/L, 1/L]; truncated at L steps, never terminated.
class PendulumSim {
 public:
  // gymnasium Pendulum constants, in its names.
  static constexpr double kMaxSpeed = 8;
  static constexpr float kMaxTorque = 2.0f;
  static constexpr double kDt = 0.05;
  static constexpr double kG = 10.0;
  static constexpr double kM = 1.0;
  static constexpr double kL = 1.0;
  static constexpr double kPi = 3.14159265358979323846;
  /// popgym's reward_transform maps [low, high] = [-16.2736044, 0] (the cost's range) onto [-1, 1].
  static constexpr double kRewardLow = -16.2736044;
  static constexpr double kRewardHalfRange = (0 - kRewardLow) / 2;

  PendulumSim(const std::string& id, int max_episode_length) : max_episode_length_(max_episode_length) {
    if (max_episode_length < 1)
      throw EnvError(fmt::format("{}: max_episode_length must be >= 1, got {}", id, max_episode_length));
  }

  int max_episode_length() const { return max_episode_length_; }
  double theta() const { return theta_; }
  double theta_dot() const { return theta_dot_; }
  int steps() const { return steps_; }
  /// The last full obs [cos theta, sin theta, theta_dot] as float32: popgym's self._state, its get_state().
  const std::array<float, 3>& full_obs() const { return full_obs_; }

  /// gymnasium's reset: theta ~ U(-pi, pi), then theta_dot ~ U(-1, 1).
  void reset(Rng& rng) { restore(rng.uniform(-kPi, kPi), rng.uniform(-1.0, 1.0)); }
  /// Starts an episode from a given state (the golden replays restore the state popgym drew).
  void restore(double theta, double theta_dot) {
    theta_ = theta;
    theta_dot_ = theta_dot;
    steps_ = 0;
    started_ = true;
    update_obs();
  }

  /// Box(-2, 2, (1,), float32).
  static Space action_space() { return Space::box({-kMaxTorque}, {kMaxTorque}); }
  /// The torque in a Box(1) action. gymnasium clips out-of-range torques instead of rejecting them, so only a wrong
  /// size or NaN (which would poison the state) is an invalid action.
  static float torque(std::span<const float> action, const Space& action_space, const std::string& id) {
    if (action.size() != 1 || std::isnan(action[0])) [[unlikely]]
      throw_invalid_action(id, action, action_space);
    return action[0];
  }

  StepResult step(float torque, const std::string& id) {
    if (!started_) [[unlikely]]
      throw_env_misuse(id, "step() called before the first reset()");
    // gymnasium PendulumEnv.step with numpy 2 promotion rules: the action is a float32 array, so the clipped torque
    // u and every product of u with a Python float stay float32 before they meet the float64 state.
    const float u = std::clamp(torque, -kMaxTorque, kMaxTorque);
    const double norm = angle_normalize(theta_);
    // numpy computes x**2 with libm pow(), which can differ from x * x in the last bit; only the reward sees these
    // squares, far below the float32 reward's precision.
    const double cost = norm * norm + 0.1 * (theta_dot_ * theta_dot_) + static_cast<double>(0.001f * (u * u));
    double new_theta_dot = theta_dot_ + (3 * kG / (2 * kL) * std::sin(theta_) +
                                         static_cast<double>(static_cast<float>(3.0 / (kM * kL * kL)) * u)) *
                                            kDt;
    new_theta_dot = std::clamp(new_theta_dot, -kMaxSpeed, kMaxSpeed);
    theta_ = theta_ + new_theta_dot * kDt;  // semi-implicit Euler: the new velocity moves the angle
    theta_dot_ = new_theta_dot;
    update_obs();

    StepResult r;
    r.reward = static_cast<float>(((-cost + kRewardHalfRange) / kRewardHalfRange) / max_episode_length_);
    ++steps_;
    r.truncated = steps_ >= max_episode_length_;
    return r;
  }

  /// gymnasium Pendulum's observation Box, which popgym keeps as the state space: [-1, -1, -8] .. [1, 1, 8].
  static Space state_space() { return Space::box({-1.0f, -1.0f, -8.0f}, {1.0f, 1.0f, 8.0f}); }
  void write_state(std::span<float> out) const { std::copy(full_obs_.begin(), full_obs_.end(), out.begin()); }

  /// gymnasium's angle_normalize: ((x + pi) mod 2 pi) - pi with numpy's floor-mod (result in [0, 2 pi)).
  static double angle_normalize(double x) {
    const double a = x + kPi;
    const double b = 2 * kPi;
    double mod = std::fmod(a, b);  // numpy's npy_divmod: fmod, then moved into the divisor's sign
    if (mod != 0) {
      if (mod < 0) mod += b;
    } else {
      mod = 0.0;  // copysign(0, b)
    }
    return mod - kPi;
  }

 private:
  void update_obs() {
    full_obs_ = {static_cast<float>(std::cos(theta_)), static_cast<float>(std::sin(theta_)),
                 static_cast<float>(theta_dot_)};
  }

  int max_episode_length_;
  double theta_ = 0, theta_dot_ = 0;
  std::array<float, 3> full_obs_{};
  int steps_ = 0;
  bool started_ = false;
};

}  // namespace rlm::envs::popgym
