// The network around the memory, as POPGym's baseline model builds it (BaseModel in
// proroklab/popgym@410d5aa:popgym/baselines/ray_models/base_model.py; sizes of popgym/baselines/ppo.py there):
//   feature_map = Linear(obs -> feature_size) + LayerNorm (no affine)
//   [embedding] = x·(1−s) + PE(t)·s, sine table, t = steps since the episode start (model.ppo.embedding: sine)
//   pre         = Linear(feature_size -> preprocessor_size) + activation (LeakyReLU; ReLU in SHM's code)
//   memory      = model.memory backend (preprocessor_size -> hidden)
//   [post]      = Linear(hidden -> postprocessor_size) + activation (model.ppo.postprocessor_size > 0; SHM's code)
//   actor       = [Linear + head activation] per head_sizes, then Linear(-> logits)
//   critic      = [Linear + head activation] per head_sizes, then Linear(-> 1)
// Orthogonal init on every Linear weight outside the memory; the final actor and critic layers ~ N(0, 0.01²).
// With model.encoder: cnn the feature map reads [image embedding, the values after the image] (image_encoder.hpp,
// PyTorch's default init, as the references' ImageEncoder).
// With the embedding, the state carries one more tensor after the memory's: the step count of each batch entry's
// episode so far ([B], int64), so that stepping with T = 1 sees the same t as a whole sequence.
#pragma once
#include <torch/torch.h>

#include "agents/experiment_config.hpp"
#include "agents/image_encoder.hpp"
#include "memory/memory.hpp"

namespace rlm::agents {

struct ActorCriticOutput {
  torch::Tensor logits;  ///< [T, B, num_logits]
  torch::Tensor values;  ///< [T, B]
  memory::MemoryState state;
};

class ActorCriticImpl : public torch::nn::Module {
 public:
  ActorCriticImpl(const ObservationLayout& obs, int64_t num_logits, const ModelConfig& config);
  /// obs: [T, B, obs.size]; starts: [T, B] bool (episode starts, see memory::Memory::forward).
  ActorCriticOutput forward(const torch::Tensor& obs, const memory::MemoryState& state, const torch::Tensor& starts);
  memory::MemoryState initial_state(int64_t batch, const torch::Device& device) const;

 private:
  ImageEncoder image_encoder_{nullptr};  // model.encoder: cnn
  torch::nn::Sequential feature_map_{nullptr}, pre_{nullptr}, post_{nullptr}, actor_{nullptr}, critic_{nullptr};
  std::shared_ptr<memory::Memory> memory_;
  torch::Tensor sine_table_;       // [embedding_max_len, feature_size] buffer; undefined without the embedding
  torch::Tensor embedding_scale_;  // s, a learned scalar
};
TORCH_MODULE(ActorCritic);

/// Steps since the episode start for every (t, b): counting from `count` ([B], steps already taken in the current
/// episodes) and from 0 at every start. Returns {positions [T, B], count after the last step [B]}, both int64.
std::pair<torch::Tensor, torch::Tensor> episode_positions(const torch::Tensor& starts, const torch::Tensor& count);

}  // namespace rlm::agents
