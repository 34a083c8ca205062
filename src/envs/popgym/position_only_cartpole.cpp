// PositionOnlyCartPole (memory skill: infer velocities from positions); follows popgym/envs/position_only_cartpole.py
// and gymnasium classic_control/cartpole.py.
#include "envs/popgym/position_only_cartpole.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"

namespace rlm::envs::popgym {

PositionOnlyCartPole::PositionOnlyCartPole(std::string id, PositionOnlyCartPoleConfig config)
    : id_(std::move(id)), max_episode_length_(config.max_episode_length) {
  if (max_episode_length_ < 1)
    throw EnvError(fmt::format("{}: max_episode_length must be >= 1, got {}", id_, max_episode_length_));
  reward_scale_ = static_cast<float>(1.0 / max_episode_length_);
}

void PositionOnlyCartPole::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  for (double& s : state_) s = rng_.uniform(-0.05, 0.05);
  steps_ = 0;
  has_state_ = true;
  fallen_ = false;
  obs[0] = static_cast<float>(state_[0]);
  obs[1] = static_cast<float>(state_[2]);
}

StepResult PositionOnlyCartPole::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (!has_state_) [[unlikely]]
    throw_env_misuse(id_, "step() called before the first reset()");

  // gymnasium CartPoleEnv.step, "euler" integrator: every right-hand side uses the old state. The parentheses
  // mirror numpy's np.square(...) so that float64 rounding matches gymnasium operation for operation.
  auto& [x, x_dot, theta, theta_dot] = state_;
  const double force = a == 1 ? kForceMag : -kForceMag;
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
  // gymnasium pays 1 while upright and on the step that falls, then 0 for any step after that; popgym maps 1 -> 1/L
  // and 0 -> -1. VecEnv auto-resets on termination, so only a direct caller can see the -1.
  if (r.terminated && fallen_) {
    r.reward = -1.0f;
  } else {
    fallen_ = fallen_ || r.terminated;
    r.reward = reward_scale_;
  }
  ++steps_;
  r.truncated = steps_ >= max_episode_length_;
  obs[0] = static_cast<float>(x);
  obs[1] = static_cast<float>(theta);
  return r;
}

}  // namespace rlm::envs::popgym
