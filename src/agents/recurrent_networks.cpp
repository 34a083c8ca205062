#include "agents/recurrent_networks.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"
#include "memory/registry.hpp"
#include "nn/linear.hpp"

namespace rlm::agents {
namespace {

torch::nn::Sequential linear_relu(int64_t in, int64_t out) {
  return torch::nn::Sequential(rlm::nn::Linear(in, out), torch::nn::ReLU());
}

/// pomdp-baselines' RNN init (Critic_RNN, Actor_RNN): orthogonal weight matrices (whole [3H, in] matrices, not per
/// gate) and zero biases; norms and frozen parameters keep their own init, as the SHM fork does.
void rlkit_memory_init(memory::Memory& memory) {
  torch::NoGradGuard no_grad;
  for (auto& item : memory.named_parameters()) {
    const std::string& name = item.key();
    auto& p = item.value();
    if (!p.requires_grad() || name.find("norm") != std::string::npos || name.find("ln_") != std::string::npos) continue;
    if (name.find("bias") != std::string::npos) {
      p.zero_();
    } else if (name.find("weight") != std::string::npos && p.dim() >= 2 && !p.is_complex()) {
      torch::nn::init::orthogonal_(p);
    }
  }
}

/// The memory's input width; `image_features` > 0 (model.encoder: cnn) replaces observation_embedding_size in the
/// separate embedder, whose observation part is then the image encoder's output itself.
int64_t embedding_width(const OffPolicyModelConfig& m, int64_t image_features = 0) {
  if (m.embedder == "joint") return m.observation_embedding_size;
  const int64_t obs_width = image_features > 0 ? image_features : m.observation_embedding_size;
  return obs_width + m.action_embedding_size + m.reward_embedding_size;
}

}  // namespace

torch::nn::Sequential make_hidden_layers(int64_t in, const std::vector<int>& hidden, bool rlkit_init) {
  torch::nn::Sequential layers;
  torch::NoGradGuard no_grad;
  for (int width : hidden) {
    rlm::nn::Linear layer(in, width);
    if (rlkit_init) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(layer->weight.size(0)));  // size[0]: out-features
      layer->weight.uniform_(-bound, bound);
      layer->bias.fill_(0.1);
    }
    layers->push_back(layer);
    layers->push_back(torch::nn::ReLU());
    in = width;
  }
  return layers;
}

rlm::nn::Linear make_last_layer(int64_t in, int64_t out, double last_init, bool rlkit_init) {
  rlm::nn::Linear last(in, out);
  if (rlkit_init) {
    torch::NoGradGuard no_grad;
    last->weight.uniform_(-last_init, last_init);
    last->bias.uniform_(-last_init, last_init);
  }
  return last;
}

torch::nn::Sequential make_mlp(int64_t in, const std::vector<int>& hidden, int64_t out, double last_init,
                               bool rlkit_init) {
  torch::nn::Sequential mlp = make_hidden_layers(in, hidden, rlkit_init);
  mlp->push_back(make_last_layer(hidden.empty() ? in : hidden.back(), out, last_init, rlkit_init));
  return mlp;
}

// ---------------------------------------------------------------------------------------------------------------
HistoryEncoderImpl::HistoryEncoderImpl(const ObservationLayout& obs, int64_t action_input_size,
                                       const OffPolicyModelConfig& m, const MemoryConfig& memory_config,
                                       bool rlkit_init) {
  if (obs.has_image()) image_encoder_ = register_module("image_encoder", ImageEncoder(obs));
  const int64_t obs_size = encodes_images() ? image_encoder_->output_size() : obs.size;
  const int64_t width = embedding_width(m, image_features_size());
  if (width == 0) {
    throw ConfigValueError("model.off_policy.observation_embedding_size",
                           "model.off_policy: every embedding size is 0, so the memory would read nothing");
  }
  if (m.embedder == "joint") {
    joint_embed_ = register_module("joint_embed", torch::nn::Sequential(rlm::nn::Linear(obs_size + action_input_size,
                                                                                        m.observation_embedding_size)));
  } else {
    // Concatenated in pomdp-baselines' order: action, reward, observation.
    if (m.action_embedding_size > 0)
      action_embed_ = register_module("action_embed", linear_relu(action_input_size, m.action_embedding_size));
    if (m.reward_embedding_size > 0)
      reward_embed_ = register_module("reward_embed", linear_relu(1, m.reward_embedding_size));
    if (m.observation_embedding_size > 0 && !encodes_images())
      obs_embed_ = register_module("obs_embed", linear_relu(obs_size, m.observation_embedding_size));
  }
  memory_ = register_module("memory", memory::make_memory(memory_config, width));
  if (rlkit_init) rlkit_memory_init(*memory_);
}

memory::MemoryOutput HistoryEncoderImpl::forward(const SequenceInputs& in, const memory::MemoryState& state) {
  torch::Tensor x;
  const torch::Tensor obs = encodes_images() ? image_encoder_->forward(in.obs) : in.obs;
  if (joint_embed_) {
    x = joint_embed_->forward(torch::cat({obs, in.prev_actions}, -1));
  } else {
    std::vector<torch::Tensor> parts;
    if (action_embed_) parts.push_back(action_embed_->forward(in.prev_actions));
    if (reward_embed_) parts.push_back(reward_embed_->forward(in.prev_rewards));
    if (obs_embed_) parts.push_back(obs_embed_->forward(obs));
    if (encodes_images()) parts.push_back(obs);
    x = parts.size() == 1 ? parts[0] : torch::cat(parts, -1);
  }
  return memory_->forward(x, state, in.starts);
}

memory::MemoryState HistoryEncoderImpl::initial_state(int64_t batch, const torch::Device& device) const {
  return memory_->initial_state(batch, device);
}

// ---------------------------------------------------------------------------------------------------------------
RecurrentCriticImpl::RecurrentCriticImpl(const ObservationLayout& obs, int64_t action_input_size, bool discrete,
                                         const OffPolicyModelConfig& m, const MemoryConfig& memory)
    : discrete_(discrete) {
  const bool rlkit = m.init == "rlkit";
  encoder_ = register_module("encoder", HistoryEncoder(obs, action_input_size, m, memory, rlkit));
  // Shortcut from the current observation (and, continuous, the action being valued): pomdp-baselines embeds it to
  // the memory's input width; the KF paper's RAC feeds it raw. With images it is the network's image embedding of
  // o_t, followed (continuous) by the action, embedded to the memory's input width or raw.
  int64_t shortcut_out = 0;
  if (encoder_->encodes_images()) {
    const int64_t width = embedding_width(m, encoder_->image_features_size());
    shortcut_out = encoder_->image_features_size();
    if (!discrete && m.shortcut == "embedded")
      shortcut_ = register_module("shortcut", linear_relu(action_input_size, width));
    if (!discrete) shortcut_out += m.shortcut == "embedded" ? width : action_input_size;
  } else {
    const int64_t shortcut_in = discrete ? obs.size : obs.size + action_input_size;
    shortcut_out = shortcut_in;
    if (m.shortcut == "embedded") {
      shortcut_out = embedding_width(m);
      shortcut_ = register_module("shortcut", linear_relu(shortcut_in, shortcut_out));
    }
  }
  const int64_t head_in = encoder_->output_size() + shortcut_out;
  const int64_t outputs = discrete ? action_input_size : 1;
  q1_ = register_module("q1", make_mlp(head_in, m.critic_layers, outputs, 3e-3, rlkit));
  q2_ = register_module("q2", make_mlp(head_in, m.critic_layers, outputs, 3e-3, rlkit));
}

TwinQ RecurrentCriticImpl::q(const torch::Tensor& hidden, const torch::Tensor& obs, const torch::Tensor& actions) {
  torch::Tensor skip;
  if (encoder_->encodes_images()) {
    skip = encoder_->image_features(obs);
    if (!discrete_) skip = torch::cat({skip, shortcut_ ? shortcut_->forward(actions) : actions}, -1);
  } else {
    skip = discrete_ ? obs : torch::cat({obs, actions}, -1);
    if (shortcut_) skip = shortcut_->forward(skip);
  }
  const auto x = torch::cat({hidden, skip}, -1);
  return {q1_->forward(x), q2_->forward(x)};
}

// ---------------------------------------------------------------------------------------------------------------
RecurrentActorImpl::RecurrentActorImpl(const ObservationLayout& obs, int64_t num_actions, PolicyHead head,
                                       const OffPolicyModelConfig& m, const MemoryConfig& memory)
    : head_(head) {
  const bool rlkit = m.init == "rlkit";
  encoder_ = register_module("encoder", HistoryEncoder(obs, num_actions, m, memory, rlkit));
  // The current-observation branch: with images, the network's image embedding of o_t (pomdp-baselines).
  int64_t branch_out = encoder_->encodes_images() ? encoder_->image_features_size() : obs.size;
  if (m.shortcut == "embedded" && !encoder_->encodes_images()) {
    branch_out = m.observation_embedding_size > 0 ? m.observation_embedding_size : embedding_width(m);
    obs_branch_ = register_module("obs_branch", linear_relu(obs.size, branch_out));
  }
  const int64_t in = encoder_->output_size() + branch_out;
  // rlkit's policies: hidden layers as the Q MLPs, last layer(s) ~ U(±1e-3); the Gaussian's log-std is a second
  // Linear from the last hidden layer (TanhGaussianPolicy).
  trunk_ = register_module("trunk", make_hidden_layers(in, m.actor_layers, rlkit));
  const int64_t last_width = m.actor_layers.empty() ? in : m.actor_layers.back();
  last_ = register_module("last", make_last_layer(last_width, num_actions, 1e-3, rlkit));
  if (head == PolicyHead::kTanhGaussian) {
    log_std_ = register_module("log_std", make_last_layer(last_width, num_actions, 1e-3, rlkit));
  }
}

torch::Tensor RecurrentActorImpl::forward(const SequenceInputs& in, const memory::MemoryState& state,
                                          memory::MemoryState* state_out) {
  auto encoded = encoder_->forward(in, state);
  if (state_out) *state_out = std::move(encoded.state);
  const auto branch = encoder_->encodes_images() ? encoder_->image_features(in.obs)
                      : obs_branch_              ? obs_branch_->forward(in.obs)
                                                 : in.obs;
  const auto x = torch::cat({encoded.y, branch}, -1);
  const auto h = trunk_->is_empty() ? x : trunk_->forward(x);
  switch (head_) {
    case PolicyHead::kCategorical:
      return last_->forward(h);
    case PolicyHead::kTanhGaussian:
      return torch::cat({last_->forward(h), log_std_->forward(h).clamp(-20.0, 2.0)}, -1);
    case PolicyHead::kDeterministic:
      return torch::tanh(last_->forward(h));
  }
  return {};
}

// ---------------------------------------------------------------------------------------------------------------
void copy_module_state(torch::nn::Module& target, const torch::nn::Module& source) {
  torch::NoGradGuard no_grad;
  auto src_params = source.named_parameters();
  for (auto& item : target.named_parameters()) item.value().copy_(src_params[item.key()]);
  auto src_buffers = source.named_buffers();
  for (auto& item : target.named_buffers()) item.value().copy_(src_buffers[item.key()]);
}

void soft_update(torch::nn::Module& target, const torch::nn::Module& source, double tau) {
  torch::NoGradGuard no_grad;
  // One fused multi-tensor op instead of two small kernels per parameter: target += tau (source − target).
  at::_foreach_lerp_(target.parameters(), source.parameters(), tau);
}

}  // namespace rlm::agents
