// Memory skill: estimate velocities by integrating positions over time (CartPole with x_dot and theta_dot removed).
// Follows proroklab/popgym@410d5aa:popgym/envs/position_only_cartpole.py ("StatelessCartPole" in the POPGym paper) on
// top of gymnasium's classic_control/cartpole.py; the env is MaskedCartPole (masked_cartpole.hpp) observing positions.
#pragma once
#include <string>
#include <utility>

#include "envs/popgym/masked_cartpole.hpp"

namespace rlm::envs::popgym {

struct PositionOnlyCartPoleConfig {
  int max_episode_length = 200;  ///< L: truncated at step L; every surviving step pays 1/L
};

/// obs = [x, theta] as float32 in +-[4.8, 0.41887903] (not clipped: it stays inside until the episode terminates);
/// action Discrete(2).
class PositionOnlyCartPole final : public MaskedCartPole {
 public:
  PositionOnlyCartPole(std::string id, PositionOnlyCartPoleConfig config)
      : MaskedCartPole(std::move(id),
                       {.observe = CartPoleObs::kPositions, .max_episode_length = config.max_episode_length}) {}
};

}  // namespace rlm::envs::popgym
