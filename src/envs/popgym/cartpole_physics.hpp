// Shared by the CartPole families (PositionOnly, VelocityOnly, NoisyPositionOnly): gymnasium's CartPole physics
// (Farama-Foundation/Gymnasium@3f0476a:gymnasium/envs/classic_control/cartpole.py) plus popgym's episode bookkeeping,
// so the envs differ only in what they observe. Header-only: step() runs once per env step and should inline.
#pragma once
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "core/error.hpp"
#include "envs/env.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

/// The float64 4-state [x, x_dot, theta, theta_dot], gymnasium's explicit Euler step, gymnasium's termination and
/// reward, and popgym's reward transform (1 -> 1/L, 0 -> -1) and truncation at L steps.
class CartPoleSim {
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
  /// Bounds of [x, theta] in the obs and state Boxes: twice the termination thresholds (float32), as upstream.
  static constexpr float kXHigh = static_cast<float>(kXThreshold * 2);
  static constexpr float kThetaHigh = static_cast<float>(kThetaThresholdRadians * 2);

  CartPoleSim(const std::string& id, int max_episode_length) : max_episode_length_(max_episode_length) {
    if (max_episode_length < 1)
      throw EnvError(fmt::format("{}: max_episode_length must be >= 1, got {}", id, max_episode_length));
    reward_scale_ = static_cast<float>(1.0 / max_episode_length);
  }

  int max_episode_length() const { return max_episode_length_; }
  /// The full float64 state [x, x_dot, theta, theta_dot] (popgym's get_state, before its float32 cast).
  const std::array<double, 4>& state() const { return state_; }
  int steps() const { return steps_; }

  /// gymnasium's reset: each state component ~ U(-0.05, 0.05).
  void reset(Rng& rng) {
    for (double& s : state_) s = rng.uniform(-0.05, 0.05);
    begin();
  }
  /// Starts an episode from a given state (the golden replays restore the state popgym drew).
  void restore(const std::array<double, 4>& state) {
    state_ = state;
    begin();
  }

  /// One step with a Discrete(2) action (already validated): 1 pushes right with +10 N, 0 left with -10 N.
  StepResult step(int64_t action, const std::string& id) {
    if (!started_) [[unlikely]]
      throw_env_misuse(id, "step() called before the first reset()");
    // gymnasium CartPoleEnv.step, "euler" integrator: every right-hand side uses the old state. The parentheses
    // mirror numpy's np.square(...) so that float64 rounding matches gymnasium operation for operation.
    auto& [x, x_dot, theta, theta_dot] = state_;
    const double force = action == 1 ? kForceMag : -kForceMag;
    const double costheta = std::cos(theta);
    const double sintheta = std::sin(theta);
    const double temp = (force + kPoleMassLength * (theta_dot * theta_dot) * sintheta) / kTotalMass;
    const double thetaacc = (kGravity * sintheta - costheta * temp) /
                            (kLength * (4.0 / 3.0 - kMassPole * (costheta * costheta) / kTotalMass));
    const double xacc = temp - kPoleMassLength * thetaacc * costheta / kTotalMass;
    x = x + kTau * x_dot;
    x_dot = x_dot + kTau * xacc;
    theta = theta + kTau * theta_dot;
    theta_dot = theta_dot + kTau * thetaacc;

    StepResult r;
    r.terminated =
        x < -kXThreshold || x > kXThreshold || theta < -kThetaThresholdRadians || theta > kThetaThresholdRadians;
    // gymnasium pays 1 while upright and on the step that falls, then 0 for any step after that; popgym maps
    // 1 -> 1/L and 0 -> -1. VecEnv auto-resets on termination, so only a direct caller can see the -1.
    if (r.terminated && fallen_) {
      r.reward = -1.0f;
    } else {
      fallen_ = fallen_ || r.terminated;
      r.reward = reward_scale_;
    }
    ++steps_;
    r.truncated = steps_ >= max_episode_length_;
    return r;
  }

  /// gymnasium CartPole's observation Box, which popgym keeps as the state space: +-[4.8, inf, 0.41887903, inf].
  static Space state_space() {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    return Space::box({-kXHigh, -kInf, -kThetaHigh, -kInf}, {kXHigh, kInf, kThetaHigh, kInf});
  }
  /// popgym's get_state(): the state cast to float32.
  void write_state(std::span<float> out) const {
    for (size_t i = 0; i < state_.size(); ++i) out[i] = static_cast<float>(state_[i]);
  }

 private:
  void begin() {
    steps_ = 0;
    started_ = true;
    fallen_ = false;
  }

  int max_episode_length_;
  float reward_scale_;
  std::array<double, 4> state_{};
  int steps_ = 0;
  bool started_ = false;  // gymnasium asserts that reset() came first
  bool fallen_ = false;   // gymnasium's steps_beyond_terminated is not None
};

}  // namespace rlm::envs::popgym
