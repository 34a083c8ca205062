// Scripted controllers for the CartPole and Pendulum families that read the hidden state (the same controllers as
// scripts/popgym_golden/position_only_cart_pole.py and position_only_pendulum.py): they reach the best returns,
// and the worst ones where a policy can, for the Part E return-range tests.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "envs/popgym/pendulum_physics.hpp"

namespace rlm::envs::test {

/// Linear state feedback on [x, x_dot, theta, theta_dot]: keeps the pole up for well over 600 steps.
inline std::vector<float> cartpole_balance(const std::array<double, 4>& s) {
  return {0.5 * s[0] + 1.0 * s[1] + 10.0 * s[2] + 2.0 * s[3] > 0 ? 1.0f : 0.0f};
}

/// Energy pumping until the pole is within 0.6 rad of upright, then a PD controller (theta = 0 is upright).
inline std::vector<float> pendulum_swing_up(double theta, double theta_dot) {
  const double angle = popgym::PendulumSim::angle_normalize(theta);
  double u;
  if (std::abs(angle) < 0.6) {
    u = -(10.0 * angle + 2.0 * theta_dot);
  } else {
    const double energy = 0.5 * theta_dot * theta_dot + 15.0 * std::cos(theta);  // 15 = upright at rest
    u = theta_dot != 0 ? 2.0 * ((theta_dot * (15.0 - energy)) > 0 ? 1 : -1) : 2.0;
  }
  return {static_cast<float>(std::clamp(u, -2.0, 2.0))};
}

/// A PD controller around the bottom: the pole hangs still, the costliest position a policy can hold.
inline std::vector<float> pendulum_hold_down(double theta, double theta_dot) {
  const double angle = popgym::PendulumSim::angle_normalize(theta - popgym::PendulumSim::kPi);
  return {static_cast<float>(std::clamp(-(10.0 * angle + 2.0 * theta_dot), -2.0, 2.0))};
}

}  // namespace rlm::envs::test
