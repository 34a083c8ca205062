// The network around the memory, as POPGym's baseline model builds it (popgym/baselines/ray_models/base_model.py;
// models_algos.md §2.4 and §5.1, "POPGym paper" column):
//   feature_map = Linear(obs -> feature_size) + LayerNorm (no affine)
//   pre         = Linear(feature_size -> preprocessor_size) + LeakyReLU
//   memory      = model.memory backend (preprocessor_size -> hidden)
//   actor       = [Linear + LeakyReLU] per head_sizes, then Linear(-> logits)
//   critic      = [Linear + LeakyReLU] per head_sizes, then Linear(-> 1)
// Orthogonal init on every Linear weight outside the memory; the final actor and critic layers ~ N(0, 0.01²).
#pragma once
#include <torch/torch.h>

#include "core/config.hpp"
#include "memory/memory.hpp"

namespace rlm::agents {

struct ActorCriticOutput {
  torch::Tensor logits;  ///< [T, B, num_logits]
  torch::Tensor values;  ///< [T, B]
  memory::MemoryState state;
};

class ActorCriticImpl : public torch::nn::Module {
 public:
  ActorCriticImpl(int64_t obs_size, int64_t num_logits, const ModelConfig& config);
  /// obs: [T, B, obs_size]; starts: [T, B] bool (episode starts, see memory::Memory::forward).
  ActorCriticOutput forward(const torch::Tensor& obs, const memory::MemoryState& state, const torch::Tensor& starts);
  memory::MemoryState initial_state(int64_t batch, const torch::Device& device) const;

 private:
  torch::nn::Sequential feature_map_{nullptr}, pre_{nullptr}, actor_{nullptr}, critic_{nullptr};
  std::shared_ptr<memory::Memory> memory_;
};
TORCH_MODULE(ActorCritic);

}  // namespace rlm::agents
