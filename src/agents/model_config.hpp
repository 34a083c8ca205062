// The network options (YAML section "model"): the observation encoder and the memory every trainer reads, PPO's
// ActorCritic (model.ppo, agents/ppo_config.hpp) and the off-policy networks (model.off_policy,
// agents/off_policy_config.hpp).
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "agents/off_policy_config.hpp"
#include "agents/ppo_config.hpp"
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
  /// PPO's ActorCritic (type ppo).
  PpoModelConfig ppo;
  /// The memory core (YAML section model.memory).
  MemoryConfig memory;
  /// Off-policy trainers: embedders, shortcut, heads and per-network memories.
  OffPolicyModelConfig off_policy;

  template <class V>
  void visit(V& v) {
    v.field("encoder", encoder, one_of({"mlp", "cnn"}));
    v.section("cnn", cnn);
    v.section("memory", memory);
    v.section("ppo", ppo);
    v.section("off_policy", off_policy);
  }
  bool operator==(const ModelConfig&) const = default;
  /// model.memory where `network` (off_policy.actor_memory or off_policy.critic_memory) says "same", else that
  /// section.
  const MemoryConfig& memory_of(const MemoryConfig& network) const { return network.type == "same" ? memory : network; }
};

}  // namespace rlm
