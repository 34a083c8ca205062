// The training options (YAML section "algo"): algo.type picks the trainer (agents/trainer.hpp), and each trainer's
// options sit in its own sub-sections (agents/ppo_config.hpp, agents/off_policy_config.hpp; which trainer reads
// which: agents/trainer_schema.cpp).
#pragma once
#include <cstdint>
#include <string>

#include "agents/off_policy_config.hpp"
#include "agents/ppo_config.hpp"
#include "agents/trainer_schema.hpp"
#include "core/config_schema.hpp"

namespace rlm {

/// Training hyperparameters (YAML section "algo"). algo.type picks the trainer. PPO reads algo.ppo; the off-policy
/// trainers read algo.off_policy and their own sub-section (algo.sac, algo.sacd, algo.td3). A config that sets an
/// option the chosen trainer does not read is an error.
struct AlgoConfig {
  /// Trainer: ppo (recurrent PPO), sac (Box actions), sacd (Discrete actions) or td3 (Box actions).
  std::string type = "ppo";
  /// Environment steps to train for, over all envs (every trainer).
  int64_t total_steps = 15000000;
  /// PPO's options (type ppo).
  PpoConfig ppo;
  /// Off-policy trainers' options (type sac, sacd, td3).
  OffPolicyConfig off_policy;
  SacConfig sac;
  SacdConfig sacd;
  Td3Config td3;

  template <class V>
  void visit(V& v) {
    v.field("type", type, trainer_types());
    v.field("total_steps", total_steps, at_least(1));
    v.section("ppo", ppo);
    v.section("off_policy", off_policy);
    v.section("sac", sac);
    v.section("sacd", sacd);
    v.section("td3", td3);
  }
  bool operator==(const AlgoConfig&) const = default;
};

}  // namespace rlm
