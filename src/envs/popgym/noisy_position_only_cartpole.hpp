// Memory skill: filter noisy position readings over time and infer the velocities from them (CartPole with x_dot and
// theta_dot removed and Gaussian noise on x and theta). Follows
// proroklab/popgym@410d5aa:popgym/envs/noisy_position_only_cartpole.py ("NoisyStatelessCartPole" in the POPGym paper);
// the env is MaskedCartPole (masked_cartpole.hpp) observing noisy positions.
#pragma once
#include <string>
#include <utility>

#include "envs/popgym/masked_cartpole.hpp"

namespace rlm::envs::popgym {

struct NoisyPositionOnlyCartPoleConfig {
  double noise_sigma = 0.1;      ///< standard deviation of the Gaussian noise on each obs component
  int max_episode_length = 200;  ///< L (200 at every difficulty upstream): truncated at step L, each step pays 1/L
};

/// obs = clip([x, theta] + N(0, sigma^2), -[4.8, 0.41887903], [4.8, 0.41887903]) as float32, with fresh noise at
/// reset and after every step; rewards and termination use the true state. Action Discrete(2).
class NoisyPositionOnlyCartPole final : public MaskedCartPole {
 public:
  NoisyPositionOnlyCartPole(std::string id, NoisyPositionOnlyCartPoleConfig config)
      : MaskedCartPole(std::move(id), {.observe = CartPoleObs::kPositions,
                                       .noise_sigma = config.noise_sigma,  // engaged even at 0: 0 still draws and clips
                                       .max_episode_length = config.max_episode_length}) {}
};

}  // namespace rlm::envs::popgym
