// The network options (YAML section "model"): PPO's ActorCritic (agents/actor_critic.hpp), the memory, and the
// off-policy networks' per-network memories and shape (agents/recurrent_networks.hpp).
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "agents/off_policy_config.hpp"
#include "core/config_schema.hpp"
#include "memory/memory_config.hpp"

namespace rlm {

/// The image encoder (model.encoder: cnn; image_encoder.hpp). Defaults: Memory-RL's lstm_cnn and pomdp-baselines'
/// credit-assignment configs (3×5×5 -> 3×3 after two 2×2 convolutions -> 144 -> 100).
struct CnnConfig {
  /// Output channels of each Conv2d (+ ReLU).
  std::vector<int> channels = {8, 16};
  /// Square kernel of each convolution (one per channels entry).
  std::vector<int> kernel_sizes = {2, 2};
  /// Stride of each convolution (one per channels entry).
  std::vector<int> strides = {1, 1};
  /// Width of the Linear after the convolutions: the image's embedding.
  int embedding_size = 100;
  /// Divide the pixels by 255 first (the references' normalize_pixel).
  bool normalize_pixels = true;

  template <class V>
  void visit(V& v) {
    v.field("channels", channels, in_range(1, 4096));
    v.field("kernel_sizes", kernel_sizes, in_range(1, 64));
    v.field("strides", strides, in_range(1, 64));
    v.field("embedding_size", embedding_size, in_range(1, kMaxWidth));
    v.field("normalize_pixels", normalize_pixels);
  }
  void check(const CheckContext& c) const {
    if (kernel_sizes.size() != channels.size() || strides.size() != channels.size()) {
      c.report({c.key("kernel_sizes"), c.key("strides"), c.key("channels")},
               fmt::format("{}: channels, kernel_sizes and strides need one entry per convolution, got {}, {} and {}",
                           c.prefix, channels.size(), kernel_sizes.size(), strides.size()));
    }
  }
  bool operator==(const CnnConfig&) const = default;
};

struct ModelConfig {
  /// How observations enter the network: mlp (a flat vector: PPO's feature map, the off-policy embedders) or cnn (an
  /// image env's pixels through model.cnn first; Visual Match, Key-to-Door).
  std::string encoder = "mlp";
  /// The image encoder, read with encoder: cnn.
  CnnConfig cnn;
  /// Width of the observation encoder's output.
  int feature_size = 128;
  /// Width of the layer between encoder and memory.
  int preprocessor_size = 128;
  /// Hidden layer widths of the policy and value heads.
  std::vector<int> head_sizes = {128, 128};
  /// Activation after the preprocessor and the postprocessor: leaky_relu (POPGym) or relu (SHM's POPGym code).
  std::string activation = "leaky_relu";
  /// Linear(memory output -> postprocessor_size) + activation before the heads; 0 = none (POPGym). SHM's code: 64.
  int postprocessor_size = 0;
  /// Activation after each hidden layer of the actor and critic: leaky_relu (POPGym), relu, or none (SHM's code).
  std::string head_activation = "leaky_relu";
  /// Positional embedding mixed into the features (POPGym's BaseModel): none, or sine (SHM's POPGym runs: a frozen
  /// sine table with base embedding_max_len, x·(1−s) + PE(t)·s with s learned from 0.5 and kept in [0, 1]).
  std::string embedding = "none";
  /// Rows of the sine table; t counts steps since the episode start (later steps use the last row).
  int embedding_max_len = 1024;
  /// The memory core (YAML section model.memory).
  MemoryConfig memory;
  /// Off-policy trainers: the actor's and the critic's own memory (separate memories, as pomdp-baselines recommends).
  /// type "same" (default) builds model.memory for that network; any backend type gives it its own settings (the
  /// SHM paper's fork runs a GRU actor with an SHM critic).
  MemoryConfig actor_memory = MemoryConfig::same_as_model();
  MemoryConfig critic_memory = MemoryConfig::same_as_model();
  /// Off-policy trainers: embedders, shortcut and heads.
  OffPolicyModelConfig off_policy;

  template <class V>
  void visit(V& v) {
    v.field("encoder", encoder, one_of({"mlp", "cnn"}));
    v.section("cnn", cnn);
    v.field("feature_size", feature_size, in_range(1, kMaxWidth));
    v.field("preprocessor_size", preprocessor_size, in_range(1, kMaxWidth));
    v.field("head_sizes", head_sizes, in_range(1, kMaxWidth));
    v.field("activation", activation, one_of({"leaky_relu", "relu"}));
    v.field("postprocessor_size", postprocessor_size, in_range(0, kMaxWidth));
    v.field("head_activation", head_activation, one_of({"leaky_relu", "relu", "none"}));
    v.field("embedding", embedding, one_of({"none", "sine"}));
    v.field("embedding_max_len", embedding_max_len, at_least(1));
    v.section("memory", memory);
    v.section("actor_memory", actor_memory);
    v.section("critic_memory", critic_memory);
    v.section("off_policy", off_policy);
  }
  bool operator==(const ModelConfig&) const = default;
  /// model.memory where `network` (actor_memory or critic_memory) says "same", else that section.
  const MemoryConfig& memory_of(const MemoryConfig& network) const { return network.type == "same" ? memory : network; }
};

}  // namespace rlm
