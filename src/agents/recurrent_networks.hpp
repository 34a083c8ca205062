// The off-policy trainers' networks, assembled from embedders + a memory backend + MLP heads, one set per network
// (twni2016/pomdp-baselines@28cb5dd:policies/models/policy_rnn.py, separate RNNs; the KF paper's RAC, KF paper §4.1):
//   HistoryEncoder  = embed(a_{t-1}, r_{t-1}, o_t) -> memory (any backend, model.off_policy.actor_memory /
//   critic_memory) RecurrentCritic = encoder -> [hidden_t, shortcut(o_t[, a_t])] -> twin Q MLPs (|A| outputs for
//   discrete actions) RecurrentActor  = encoder -> [hidden_t, obs branch(o_t)] -> policy MLP -> categorical logits
//   (sacd),
//                     mean and log-std (sac) or tanh(mean) (td3)
// With model.encoder: cnn each network has one image encoder (image_encoder.hpp) that both its memory input and its
// shortcut read, as pomdp-baselines shares one per network: the image's embedding replaces the observation embedding
// (its width replaces observation_embedding_size) and the shortcut's o_t branch.
// Sequences are time-major and length T + 1: position i holds o_i with the action and reward before it (0 at an
// episode start), so hidden_i summarises o_0, (a_0, r_0, o_1), ..., (a_{i-1}, r_{i-1}, o_i) (policy_rnn.py's update).
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

#include "agents/experiment_config.hpp"
#include "agents/image_encoder.hpp"
#include "memory/memory.hpp"
#include "nn/linear.hpp"

namespace rlm::agents {

/// What the networks read at each position of a sequence, [T, B, ...] (T = 1 when acting).
struct SequenceInputs {
  torch::Tensor obs;           ///< [T, B, obs_size]
  torch::Tensor prev_actions;  ///< [T, B, action_input_size]: one-hot (discrete) or in [-1, 1] (continuous)
  torch::Tensor prev_rewards;  ///< [T, B, 1]
  torch::Tensor starts;        ///< [T, B] bool: the memory resets before the position
};

/// The policy head a trainer needs.
enum class PolicyHead { kCategorical, kTanhGaussian, kDeterministic };

/// rlkit's Mlp: Linear + ReLU per hidden width, then a last Linear. With `rlkit_init`, hidden weights ~ U(±1/√out)
/// (fanin_init in pomdp-baselines' torchkit/pytorch_utils.py reads size[0], the out-features: a quirk kept on
/// purpose), hidden biases 0.1, last layer weights and biases ~ U(±last_init); otherwise LibTorch's defaults.
torch::nn::Sequential make_mlp(int64_t in, const std::vector<int>& hidden, int64_t out, double last_init,
                               bool rlkit_init);
/// The hidden part of make_mlp (Linear + ReLU per width; empty for no widths) and its last layer.
torch::nn::Sequential make_hidden_layers(int64_t in, const std::vector<int>& hidden, bool rlkit_init);
rlm::nn::Linear make_last_layer(int64_t in, int64_t out, double last_init, bool rlkit_init);

class HistoryEncoderImpl : public torch::nn::Module {
 public:
  HistoryEncoderImpl(const ObservationLayout& obs, int64_t action_input_size, const OffPolicyModelConfig& model,
                     const MemoryConfig& memory, bool rlkit_init);
  /// hidden [T, B, output_size()] and the memory's state after the last position.
  memory::MemoryOutput forward(const SequenceInputs& in, const memory::MemoryState& state);
  memory::MemoryState initial_state(int64_t batch, const torch::Device& device) const;
  int64_t output_size() const { return memory_->output_size(); }
  /// With an image encoder: o_t's image embedding (and the values after the image), which the shortcuts read too.
  bool encodes_images() const { return !image_encoder_.is_empty(); }
  torch::Tensor image_features(const torch::Tensor& obs) { return image_encoder_->forward(obs); }
  int64_t image_features_size() const { return encodes_images() ? image_encoder_->output_size() : 0; }

 private:
  ImageEncoder image_encoder_{nullptr};
  torch::nn::Sequential obs_embed_{nullptr}, action_embed_{nullptr}, reward_embed_{nullptr}, joint_embed_{nullptr};
  std::shared_ptr<memory::Memory> memory_;
};
TORCH_MODULE(HistoryEncoder);

struct TwinQ {
  torch::Tensor q1, q2;  ///< [T, B, |A|] (discrete) or [T, B, 1] (continuous)
};

class RecurrentCriticImpl : public torch::nn::Module {
 public:
  /// num_outputs: |A| for a discrete critic (Q of every action), 1 for a continuous one (reads the action).
  RecurrentCriticImpl(const ObservationLayout& obs, int64_t action_input_size, bool discrete,
                      const OffPolicyModelConfig& model, const MemoryConfig& memory);
  /// Encoder outputs of whole sequences, from the initial state.
  memory::MemoryOutput encode(const SequenceInputs& in) {
    return encoder_->forward(in, encoder_->initial_state(in.obs.size(1), in.obs.device()));
  }
  /// Q at positions whose encoder outputs are `hidden`, observations `obs` and (continuous) actions `actions`.
  TwinQ q(const torch::Tensor& hidden, const torch::Tensor& obs, const torch::Tensor& actions);
  HistoryEncoder encoder() const { return encoder_; }

 private:
  bool discrete_;
  HistoryEncoder encoder_{nullptr};
  torch::nn::Sequential shortcut_{nullptr};  // empty for raw shortcuts; with images, it embeds the action only
  torch::nn::Sequential q1_{nullptr}, q2_{nullptr};
};
TORCH_MODULE(RecurrentCritic);

class RecurrentActorImpl : public torch::nn::Module {
 public:
  /// num_actions: |A| (discrete) or action dimensions (continuous), which is also the width of the previous action
  /// the encoder reads (one-hot, or the action itself).
  RecurrentActorImpl(const ObservationLayout& obs, int64_t num_actions, PolicyHead head,
                     const OffPolicyModelConfig& model, const MemoryConfig& memory);
  /// The head's raw outputs at every position: logits [T, B, |A|] (categorical), mean and log-std clamped to
  /// [−20, 2] concatenated [T, B, 2·dims] (tanh-Gaussian), or tanh(mean) [T, B, dims] (deterministic).
  torch::Tensor forward(const SequenceInputs& in, const memory::MemoryState& state, memory::MemoryState* state_out);
  memory::MemoryState initial_state(int64_t batch, const torch::Device& device) const {
    return encoder_->initial_state(batch, device);
  }
  PolicyHead head() const { return head_; }

 private:
  PolicyHead head_;
  HistoryEncoder encoder_{nullptr};
  torch::nn::Sequential obs_branch_{nullptr};  // empty for a raw shortcut
  torch::nn::Sequential trunk_{nullptr};       // hidden layers
  rlm::nn::Linear last_{nullptr}, log_std_{nullptr};
};
TORCH_MODULE(RecurrentActor);

/// Copies every parameter and buffer of `source` into `target` (same architecture): the target networks' start.
void copy_module_state(torch::nn::Module& target, const torch::nn::Module& source);
/// target ← (1 − tau) target + tau source, parameters only (Polyak averaging).
void soft_update(torch::nn::Module& target, const torch::nn::Module& source, double tau);

}  // namespace rlm::agents
