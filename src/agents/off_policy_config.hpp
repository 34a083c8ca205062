// The off-policy trainers' options (agents/off_policy.hpp): algo.off_policy, algo.sac, algo.sacd, algo.td3 and the
// networks' shape, model.off_policy.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/config_schema.hpp"
#include "memory/memory_config.hpp"

namespace rlm {

/// Recurrent off-policy training (algo.type sac, sacd or td3; YAML section algo.off_policy): what pomdp-baselines
/// splits over its train/policy/eval sections (twni2016/pomdp-baselines@28cb5dd:policies/learner.py). Defaults are
/// pomdp-baselines'.
struct OffPolicyConfig {
  /// Adam learning rate of actor and critic (pomdp-baselines lr).
  double lr = 3e-4;
  /// Discount factor.
  double gamma = 0.99;
  /// Polyak rate of the target networks, after every update.
  double tau = 0.005;
  /// Sequences (windows) per gradient update.
  int batch_size = 32;
  /// Window length T of the sampled sequences; 0 = the env's longest episode, so a window is a whole episode
  /// (pomdp-baselines sampled_seq_len: -1).
  int sampled_seq_len = 0;
  /// Steps before each window that only warm up the memories (R2D2 burn-in; no loss). 0 = none, as every reference.
  int burn_in = 0;
  /// Replay capacity in transitions; whole oldest episodes are evicted first.
  int64_t buffer_size = 1000000;
  /// Episode e is sampled with probability ∝ baseline + its number of valid window starts (sample_weight_baseline).
  double sample_weight_baseline = 0.0;
  /// Episodes played with uniformly random actions before training (num_init_rollouts_pool; Memory-RL: 10).
  int warmup_episodes = 5;
  /// Gradient updates per new env step (update-to-data ratio): after each iteration, ceil(ratio * its new steps)
  /// updates (pomdp-baselines' float num_updates_per_iter; Memory-RL 0.25, KF paper 1.0 on POPGym).
  double updates_per_step = 1.0;
  /// Evaluate the deterministic policy every this many training episodes (0: never).
  int eval_interval = 50;
  /// Episodes per periodic evaluation, on separate eval envs. Envs with a task split (Wind, Point Robot) play each
  /// held-out task once instead while eval_each_task is on.
  int eval_episodes = 16;
  /// Envs with a task split: each evaluation plays every held-out task once, and the first as many training tasks
  /// once each, as pomdp-baselines' evaluate() does; false: eval_episodes episodes on tasks drawn uniformly.
  bool eval_each_task = true;
  /// Envs that report goal states (Wind, Point Robot): the replay marks every step that ends in a goal state
  /// terminal for the TD target, as pomdp-baselines' meta-RL learner stores is_goal_state() (the episode goes on);
  /// false: only a real termination is terminal.
  bool goal_state_terminal = true;
  /// Gradient-norm clip of each optimiser step (<= 0: off; pomdp-baselines has none, Memory-RL max_norm 1).
  double grad_clip = 0.0;

  template <class V>
  void visit(V& v) {
    v.field("lr", lr, greater_than(0));
    v.field("gamma", gamma, in_range(0, 1));
    v.field("tau", tau, in_range(0, 1));
    v.field("batch_size", batch_size, in_range(1, 1 << 20));
    v.field("sampled_seq_len", sampled_seq_len, in_range(0, 1 << 20));
    v.field("burn_in", burn_in, in_range(0, 1 << 20));
    v.field("buffer_size", buffer_size, in_range(1, 1e10));
    v.field("sample_weight_baseline", sample_weight_baseline, at_least(0));
    v.field("warmup_episodes", warmup_episodes, at_least(0));
    v.field("updates_per_step", updates_per_step, at_least(0));
    v.field("eval_interval", eval_interval, at_least(0));
    v.field("eval_episodes", eval_episodes, at_least(1));
    v.field("eval_each_task", eval_each_task);
    v.field("goal_state_terminal", goal_state_terminal);
    v.field("grad_clip", grad_clip, any_number());
  }
  bool operator==(const OffPolicyConfig&) const = default;
};

/// The entropy temperature α of SAC and SAC-D (pomdp-baselines' policies/rl/sac.py, sacd.py); each adds its own
/// target entropy.
struct TemperatureConfig {
  /// α when automatic_entropy_tuning is off.
  double entropy_alpha = 0.1;
  /// Learn α towards the target entropy.
  bool automatic_entropy_tuning = true;
  /// α at the start when tuned: 1 is pomdp-baselines' (log α = 0); Memory-RL's init_temperature is 0.1. POPGym's
  /// rewards are at most 1/L per step, so a start at 1 holds the policy at maximum entropy for thousands of updates.
  double initial_alpha = 1.0;
  /// Adam learning rate of log α.
  double alpha_lr = 3e-4;

  template <class V>
  void visit(V& v) {
    v.field("entropy_alpha", entropy_alpha, at_least(0));
    v.field("automatic_entropy_tuning", automatic_entropy_tuning);
    v.field("initial_alpha", initial_alpha, greater_than(0));
    v.field("alpha_lr", alpha_lr, greater_than(0));
  }
  bool operator==(const TemperatureConfig&) const = default;
};

/// SAC for Box actions (algo.sac): tanh-squashed Gaussian, twin critics (pomdp-baselines' policies/rl/sac.py).
struct SacConfig : TemperatureConfig {
  /// Target entropy per action dimension: target = target_entropy_per_dim · dim(A) (−1: the usual −dim(A)).
  double target_entropy_per_dim = -1.0;

  template <class V>
  void visit(V& v) {
    TemperatureConfig::visit(v);
    v.field("target_entropy_per_dim", target_entropy_per_dim, any_number());
  }
  bool operator==(const SacConfig&) const = default;
};

/// SAC-Discrete (algo.sacd): categorical policy, Q for every action (pomdp-baselines' sacd.py; KF paper App. B).
struct SacdConfig : TemperatureConfig {
  /// Target entropy = ratio · ln|A| (pomdp-baselines' target_entropy for sacd; KF paper 0.7, MineSweeper 0.35).
  double target_entropy_ratio = 0.7;

  template <class V>
  void visit(V& v) {
    TemperatureConfig::visit(v);
    v.field("target_entropy_ratio", target_entropy_ratio, in_range(0, 1));
  }
  bool operator==(const SacdConfig&) const = default;
};

/// TD3 (algo.td3) as pomdp-baselines' policies/rl/td3.py runs it: no delayed policy update, actor loss −min(Q1, Q2).
struct Td3Config {
  /// Std of the Gaussian exploration noise added to the deterministic action in [−1, 1].
  double exploration_noise = 0.1;
  /// Std of the target policy smoothing noise.
  double target_noise = 0.2;
  /// The smoothing noise is clipped to ±target_noise_clip.
  double target_noise_clip = 0.5;

  template <class V>
  void visit(V& v) {
    v.field("exploration_noise", exploration_noise, at_least(0));
    v.field("target_noise", target_noise, at_least(0));
    v.field("target_noise_clip", target_noise_clip, at_least(0));
  }
  bool operator==(const Td3Config&) const = default;
};

/// The off-policy trainers' networks (model.off_policy): embedders -> memory -> heads with a shortcut from the
/// current observation, one set per network (actor, critic; the target critic is a copy), as pomdp-baselines'
/// separate-RNN agent (policies/models/policy_rnn.py) or the KF paper's RAC (KF paper §4.1, App. B) builds them.
struct OffPolicyModelConfig {
  /// separate: Linear + ReLU per input (observation, previous action, previous reward), concatenated in the order
  /// action, reward, observation (pomdp-baselines); joint: one Linear on [o_t, a_{t-1}] without activation, rewards
  /// not read (KF paper), of width observation_embedding_size.
  std::string embedder = "separate";
  /// Embedding widths; 0 drops that input (separate embedder). pomdp-baselines' pomdp configs: 32 / 8 / 8.
  int observation_embedding_size = 32;
  int action_embedding_size = 8;
  int reward_embedding_size = 8;
  /// The heads also read the current observation: embedded (pomdp-baselines: Linear + ReLU of o_t, and of [o_t, a_t]
  /// in a continuous critic) or raw (KF paper: o_t itself).
  std::string shortcut = "embedded";
  /// Hidden widths of the policy MLP (policy_layers) and of each Q MLP (dqn_layers); pomdp-baselines' pomdp configs.
  std::vector<int> actor_layers = {128, 128};
  std::vector<int> critic_layers = {128, 128};
  /// rlkit: pomdp-baselines' init (MLP weights U(±1/√out_features), biases 0.1, last layers U(±3e-3 / ±1e-3), memory
  /// weights orthogonal with zero biases: recurrent_networks.hpp); torch: LibTorch's defaults everywhere.
  std::string init = "rlkit";
  /// The actor's and the critic's own memory (separate memories, as pomdp-baselines recommends). type "same"
  /// (default) builds model.memory for that network; any backend type gives it its own settings (the SHM paper's
  /// fork runs a GRU actor with an SHM critic).
  MemoryConfig actor_memory = MemoryConfig::same_as_model();
  MemoryConfig critic_memory = MemoryConfig::same_as_model();

  template <class V>
  void visit(V& v) {
    v.field("embedder", embedder, one_of({"separate", "joint"}));
    v.field("observation_embedding_size", observation_embedding_size, in_range(0, kMaxWidth));
    v.field("action_embedding_size", action_embedding_size, in_range(0, kMaxWidth));
    v.field("reward_embedding_size", reward_embedding_size, in_range(0, kMaxWidth));
    v.field("shortcut", shortcut, one_of({"embedded", "raw"}));
    v.field("actor_layers", actor_layers, in_range(1, kMaxWidth));
    v.field("critic_layers", critic_layers, in_range(1, kMaxWidth));
    v.field("init", init, one_of({"rlkit", "torch"}));
    v.section("actor_memory", actor_memory);
    v.section("critic_memory", critic_memory);
  }
  bool operator==(const OffPolicyModelConfig&) const = default;
};

}  // namespace rlm
