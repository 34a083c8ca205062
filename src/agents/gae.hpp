// Generalised advantage estimation (Schulman et al. 2016) over one episode or episode piece, as RLlib's
// compute_advantages does per episode in POPGym's PPO (models_algos.md §5.3). Torch-free: it is plain arithmetic.
#pragma once
#include <span>

namespace rlm::agents {

/// advantages[t] = sum_k (gamma*lambda)^k delta[t+k], delta[t] = r[t] + gamma*V[t+1] - V[t], with V[n] =
/// bootstrap_value: 0 when the episode terminated, the value of the final observation when it was truncated.
/// Value targets are advantages[t] + values[t].
void compute_gae(std::span<const float> rewards, std::span<const float> values, float bootstrap_value, float gamma,
                 float lambda, std::span<float> advantages);

}  // namespace rlm::agents
