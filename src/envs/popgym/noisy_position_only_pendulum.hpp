// Memory skill: filter noisy angle readings over time and infer the angular velocity from them (gymnasium Pendulum with
// theta_dot removed and Gaussian noise on cos and sin). Follows
// proroklab/popgym@410d5aa:popgym/envs/noisy_position_only_pendulum.py ("NoisyStatelessPendulum" in the POPGym paper);
// the env is MaskedPendulum (masked_pendulum.hpp) with noise.
#pragma once
#include <string>
#include <utility>

#include "envs/popgym/masked_pendulum.hpp"

namespace rlm::envs::popgym {

struct NoisyPositionOnlyPendulumConfig {
  double noise_sigma = 0.1;      ///< standard deviation of the Gaussian noise on each obs component
  int max_episode_length = 200;  ///< L (200 at every difficulty upstream): truncated at step L, never terminated
};

/// obs = clip([cos theta, sin theta] + N(0, sigma^2), -1, 1) as float32, with fresh noise at reset and after every
/// step; rewards use the true state. Action Box(-2, 2, (1,)) torque.
class NoisyPositionOnlyPendulum final : public MaskedPendulum {
 public:
  NoisyPositionOnlyPendulum(std::string id, NoisyPositionOnlyPendulumConfig config)
      : MaskedPendulum(std::move(id), {.noise_sigma = config.noise_sigma,  // engaged even at 0: 0 still draws and clips
                                       .max_episode_length = config.max_episode_length}) {}
};

}  // namespace rlm::envs::popgym
