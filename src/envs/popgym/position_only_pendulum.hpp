// Memory skill: estimate the angular velocity from successive angles to swing up and balance a pendulum (gymnasium
// Pendulum with theta_dot removed). Follows proroklab/popgym@410d5aa:popgym/envs/position_only_pendulum.py
// ("StatelessPendulum" in the POPGym paper) on top of gymnasium's classic_control/pendulum.py; the env is
// MaskedPendulum (masked_pendulum.hpp) without noise.
#pragma once
#include <string>
#include <utility>

#include "envs/popgym/masked_pendulum.hpp"

namespace rlm::envs::popgym {

struct PositionOnlyPendulumConfig {
  int max_episode_length = 200;  ///< L: truncated at step L, never terminated (shorter is harder)
};

/// obs = [cos theta, sin theta] as float32 in Box([-1, -1], [1, 1]); action Box(-2, 2, (1,)) torque.
class PositionOnlyPendulum final : public MaskedPendulum {
 public:
  PositionOnlyPendulum(std::string id, PositionOnlyPendulumConfig config)
      : MaskedPendulum(std::move(id), {.max_episode_length = config.max_episode_length}) {}
};

}  // namespace rlm::envs::popgym
