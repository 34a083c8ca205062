// The training options (YAML section "algo"): algo.type picks the trainer (agents/trainer.hpp); PPO's options sit
// directly in algo, the off-policy trainers' in their sub-sections (agents/off_policy_config.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "agents/off_policy_config.hpp"
#include "core/config_schema.hpp"

namespace rlm {

/// Training hyperparameters (YAML section "algo"). algo.type picks the trainer. PPO's options sit directly in algo,
/// where every PPO config has them; the off-policy trainers read algo.off_policy and their own sub-section
/// (algo.sac, algo.sacd, algo.td3). A config that sets an option the chosen trainer does not read is an error.
struct AlgoConfig {
  /// Trainer: ppo (recurrent PPO), sac (Box actions), sacd (Discrete actions) or td3 (Box actions).
  std::string type = "ppo";
  /// Environment steps to train for, over all envs (every trainer).
  int64_t total_steps = 15000000;
  /// Steps each env collects per rollout (RLlib rollout_fragment_length).
  int steps_per_env = 1024;
  /// complete_episodes (RLlib's, as POPGym runs it): every env collects >= steps_per_env steps and then finishes
  /// its episode, so a batch holds whole episodes only. RLlib's truncate_episodes is not implemented yet.
  std::string batch_mode = "complete_episodes";
  /// Longest training sequence (RLlib max_seq_len); must be >= the env's longest episode (checked at start).
  int max_seq_len = 1024;
  /// Real (unpadded) timesteps per SGD minibatch, widened or narrowed to whole sequences (RLlib sgd_minibatch_size;
  /// agents/minibatches.hpp).
  int minibatch_size = 8192;
  /// SGD passes over each rollout (RLlib num_sgd_iter).
  int epochs = 30;
  /// Adam learning rate.
  double lr = 5e-5;
  /// Adam epsilon.
  double adam_eps = 1e-8;
  /// Discount factor.
  double gamma = 0.99;
  /// GAE lambda (1: Monte Carlo returns).
  double gae_lambda = 1.0;
  /// PPO ratio clip.
  double clip_param = 0.3;
  /// Clip of the value loss (on the squared error, as RLlib does).
  double vf_clip_param = 10.0;
  /// Weight of the value loss.
  double vf_loss_coeff = 1.0;
  /// Weight of the entropy bonus.
  double entropy_coeff = 0.0;
  /// Initial weight of the KL penalty (adapted towards kl_target; 0: no penalty).
  double kl_coeff = 0.2;
  /// Target KL divergence per update for the adaptive penalty.
  double kl_target = 0.01;
  /// Global gradient-norm clip (<= 0: off).
  double grad_clip = 0.0;
  /// Divergence guard: stop the run (exit 4, nothing checkpointed) when an iteration's mean KL exceeds this. A
  /// healthy PPO iteration moves the policy by ~kl_target (0.01) nats; 1000 only catches a run that has blown up
  /// (lr = 1e3 reaches 1e11). 0 turns the check off; non-finite losses, gradients and parameters always stop a run.
  double max_kl = 1000.0;
  /// Standardise advantages over the whole batch of real (unpadded) steps before the epochs, as RLlib's
  /// standardized() does: (A − mean) / max(std, 1e-4), population std.
  bool normalize_advantages = true;

  /// Off-policy trainers' options (type sac, sacd, td3).
  OffPolicyConfig off_policy;
  SacConfig sac;
  SacdConfig sacd;
  Td3Config td3;

  template <class V>
  void visit(V& v) {
    v.field("type", type, one_of({"ppo", "sac", "sacd", "td3"}));
    v.field("total_steps", total_steps, at_least(1));
    v.field("steps_per_env", steps_per_env, at_least(1));
    v.field("batch_mode", batch_mode, one_of({"complete_episodes"}));
    v.field("max_seq_len", max_seq_len, at_least(1));
    v.field("minibatch_size", minibatch_size, at_least(1));
    v.field("epochs", epochs, at_least(1));
    v.field("lr", lr, greater_than(0));
    v.field("adam_eps", adam_eps, greater_than(0));
    v.field("gamma", gamma, in_range(0, 1));
    v.field("gae_lambda", gae_lambda, in_range(0, 1));
    v.field("clip_param", clip_param, greater_than(0));
    v.field("vf_clip_param", vf_clip_param, greater_than(0));
    v.field("vf_loss_coeff", vf_loss_coeff, at_least(0));
    v.field("entropy_coeff", entropy_coeff, at_least(0));
    v.field("kl_coeff", kl_coeff, at_least(0));
    v.field("kl_target", kl_target, greater_than(0));
    v.field("grad_clip", grad_clip, any_number());
    v.field("max_kl", max_kl, at_least(0));
    v.field("normalize_advantages", normalize_advantages);
    v.section("off_policy", off_policy);
    v.section("sac", sac);
    v.section("sacd", sacd);
    v.section("td3", td3);
  }
  /// The temperature settings of the chosen SAC variant (algo.sacd for sacd, else algo.sac).
  const TemperatureConfig& temperature() const {
    return type == "sacd" ? static_cast<const TemperatureConfig&>(sacd) : sac;
  }
  bool operator==(const AlgoConfig&) const = default;
};

/// The PPO options of algo (every field of AlgoConfig outside type, total_steps and the off-policy sections): a
/// config for an off-policy trainer must not set them.
bool is_ppo_only_key(const std::string& key);

}  // namespace rlm
