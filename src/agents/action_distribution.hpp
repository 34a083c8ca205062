// The policy's action distribution for any supported action space, and the map from its samples to env actions.
// Discrete / MultiDiscrete -> MultiCategorical over the logits; Box -> diagonal Gaussian whose mean and log-std are
// the actor's outputs (RLlib's TorchDiagGaussian), sampled in a normalised [-1, 1] space and mapped linearly onto
// the Box bounds after clipping (RLlib's normalize_actions=True, the default POPGym runs with).
// Actions are float tensors [..., action_size] everywhere, so rollouts store every kind the same way.
#pragma once
#include <torch/torch.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "agents/multi_categorical.hpp"
#include "envs/space.hpp"

namespace rlm::agents {

struct ActionSpec {
  bool continuous = false;
  std::vector<int64_t> nvec;     ///< discrete components
  std::vector<float> low, high;  ///< Box bounds (continuous)

  /// From an env's action space; throws ConfigError naming env_id for spaces the policy cannot produce.
  static ActionSpec from_space(const envs::Space& space, const std::string& env_id);
  int64_t action_size() const;  ///< floats per action
  int64_t num_logits() const;   ///< actor outputs: sum(nvec), or 2 * dims (mean, log-std)
  /// actions [N, action_size] (CPU, float) -> env actions (raw layout), unsquashing continuous ones onto the bounds.
  void to_env_actions(const torch::Tensor& actions, std::span<float> out) const;
};

class DiagGaussian {
 public:
  explicit DiagGaussian(const torch::Tensor& logits);  ///< logits [..., 2 * dims]: mean, then log-std
  torch::Tensor sample(const torch::Generator& generator) const;
  torch::Tensor mode() const { return mean_; }
  torch::Tensor log_prob(const torch::Tensor& actions) const;
  torch::Tensor entropy() const;
  torch::Tensor kl(const DiagGaussian& other) const;  ///< KL(this || other)

 private:
  torch::Tensor mean_, log_std_;
};

class ActionDistribution {
 public:
  ActionDistribution(const ActionSpec& spec, const torch::Tensor& logits);
  torch::Tensor sample(const torch::Generator& generator) const;  ///< float [..., action_size]
  torch::Tensor mode() const;                                     ///< float [..., action_size]
  torch::Tensor log_prob(const torch::Tensor& actions) const;     ///< [...]
  torch::Tensor entropy() const;                                  ///< [...]
  torch::Tensor kl(const ActionDistribution& other) const;        ///< KL(this || other), [...]

 private:
  std::optional<MultiCategorical> categorical_;
  std::optional<DiagGaussian> gaussian_;
};

}  // namespace rlm::agents
