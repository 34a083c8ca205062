// Categorical distribution over one or more discrete action components (Discrete = one component,
// MultiDiscrete = several). Log-probs, entropies and KLs are summed over components, as RLlib's
// TorchMultiCategorical does for POPGym's MultiDiscrete envs (ray-project/ray@ray-2.3.0:
// rllib/models/torch/torch_action_dist.py).
#pragma once
#include <torch/torch.h>

#include <vector>

namespace rlm::agents {

class MultiCategorical {
 public:
  /// logits: [..., sum(nvec)]; component i owns the next nvec[i] logits.
  MultiCategorical(const torch::Tensor& logits, const std::vector<int64_t>& nvec);
  torch::Tensor sample(const torch::Generator& generator) const;  ///< [..., K] int64
  torch::Tensor mode() const;                                     ///< [..., K] int64, most likely actions
  torch::Tensor log_prob(const torch::Tensor& actions) const;     ///< actions [..., K] -> [...]
  torch::Tensor entropy() const;                                  ///< [...]
  torch::Tensor kl(const MultiCategorical& other) const;          ///< KL(this || other), [...]

 private:
  std::vector<torch::Tensor> log_probs_;  ///< per component: [..., n_i], normalised
};

/// Total number of logits for an action space with these components.
int64_t num_logits(const std::vector<int64_t>& nvec);

}  // namespace rlm::agents
