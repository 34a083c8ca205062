// Memory skill: integrate velocities over time to track positions (CartPole with x and theta removed). Follows
// proroklab/popgym@410d5aa:popgym/envs/velocity_only_cartpole.py (added in v1.0.3, not in the POPGym paper); the env is
// MaskedCartPole (masked_cartpole.hpp) observing velocities. Registered upstream as
// popgym-VelocityOnlyCartpole<Level>-v0 (lowercase p), hence our ids popgym/VelocityOnlyCartpole<Level>.
#pragma once
#include <string>
#include <utility>

#include "envs/popgym/masked_cartpole.hpp"

namespace rlm::envs::popgym {

struct VelocityOnlyCartPoleConfig {
  int max_episode_length = 200;  ///< L: truncated at step L; every surviving step pays 1/L
  /// Upstream quirk: reset() returns the *positions* [x, theta] while every step returns the velocities [x_dot,
  /// theta_dot]. false mirrors upstream; true fixes it (the reset obs holds the velocities too).
  bool reset_obs_velocities = false;
};

/// obs = [x_dot, theta_dot] as float32 in Box(-inf, inf) (the reset obs holds [x, theta] unless
/// reset_obs_velocities); action Discrete(2).
class VelocityOnlyCartPole final : public MaskedCartPole {
 public:
  VelocityOnlyCartPole(std::string id, VelocityOnlyCartPoleConfig config)
      : MaskedCartPole(std::move(id), {.observe = CartPoleObs::kVelocities,
                                       .max_episode_length = config.max_episode_length,
                                       .reset_obs_positions = !config.reset_obs_velocities}) {}
};

}  // namespace rlm::envs::popgym
