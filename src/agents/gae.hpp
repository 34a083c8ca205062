// Generalised advantage estimation (GAE paper) over one episode or episode piece, as RLlib's compute_advantages
// (ray-project/ray@ray-2.3.0:rllib/evaluation/postprocessing.py) does per episode in POPGym's PPO. Plain arithmetic.
#pragma once
#include <span>

namespace rlm::agents {

/// advantages[t] = sum_k (gamma*lambda)^k delta[t+k], delta[t] = r[t] + gamma*V[t+1] - V[t], with V[n] =
/// bootstrap_value: 0 when the episode terminated, the value of the final observation when it was truncated.
/// Value targets are advantages[t] + values[t].
void compute_gae(std::span<const float> rewards, std::span<const float> values, float bootstrap_value, float gamma,
                 float lambda, std::span<float> advantages);

}  // namespace rlm::agents
