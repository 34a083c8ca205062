// PPO's options: algo.ppo (the trainer, agents/ppo.hpp) and model.ppo (its ActorCritic network,
// agents/actor_critic.hpp). Defaults are POPGym's
// (proroklab/popgym@410d5aa:popgym/baselines/ppo.py).
#pragma once
#include <string>
#include <vector>

#include "core/config_schema.hpp"

namespace rlm {

/// Recurrent PPO's training options (YAML section algo.ppo), RLlib's PPO as POPGym runs it.
struct PpoConfig {
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

  template <class V>
  void visit(V& v) {
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
  }
  bool operator==(const PpoConfig&) const = default;
};

/// PPO's ActorCritic around the memory (YAML section model.ppo).
struct PpoModelConfig {
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

  template <class V>
  void visit(V& v) {
    v.field("feature_size", feature_size, in_range(1, kMaxWidth));
    v.field("preprocessor_size", preprocessor_size, in_range(1, kMaxWidth));
    v.field("head_sizes", head_sizes, in_range(1, kMaxWidth));
    v.field("activation", activation, one_of({"leaky_relu", "relu"}));
    v.field("postprocessor_size", postprocessor_size, in_range(0, kMaxWidth));
    v.field("head_activation", head_activation, one_of({"leaky_relu", "relu", "none"}));
    v.field("embedding", embedding, one_of({"none", "sine"}));
    v.field("embedding_max_len", embedding_max_len, at_least(1));
  }
  bool operator==(const PpoModelConfig&) const = default;
};

}  // namespace rlm
