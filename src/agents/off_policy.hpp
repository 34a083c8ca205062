// Recurrent off-policy actor-critic: SAC (Box actions), SAC-Discrete and TD3, with separate actor and critic memories
// and an episode replay buffer, as twni2016/pomdp-baselines@28cb5dd trains them (and the RAC of KF paper §4.1).
// See off_policy.cpp for the loop and every choice it makes.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>

#include "agents/acting.hpp"
#include "agents/action_distribution.hpp"
#include "agents/checkpoint.hpp"
#include "agents/episode_replay.hpp"
#include "agents/experiment_config.hpp"
#include "agents/off_policy/algorithm.hpp"
#include "agents/off_policy/task_split_eval.hpp"
#include "agents/recurrent_networks.hpp"
#include "agents/trainer.hpp"
#include "core/seed.hpp"
#include "envs/vec_env.hpp"

namespace rlm {
class MetricsLogger;
class ProgressLine;
}  // namespace rlm

namespace rlm::agents {

/// Every network of an off-policy run in one module, so that one checkpoint archive holds them all: actor, critic,
/// target critic, target actor (TD3 only) and log α.
class OffPolicyAgentImpl : public torch::nn::Module {
 public:
  OffPolicyAgentImpl(const ObservationLayout& obs, const ActionSpec& spec, const Config& config,
                     const OffPolicyAlgorithm& algorithm);
  RecurrentActor actor{nullptr}, actor_target{nullptr};
  RecurrentCritic critic{nullptr}, critic_target{nullptr};
  torch::Tensor log_alpha;  ///< [1]; α = exp(log α) when tuned
  bool discrete() const { return discrete_; }
  int64_t num_actions() const { return num_actions_; }  ///< |A| (discrete) or action dimensions
  /// Stored actions (a Discrete index as a float, or a Box action in [−1, 1]) as the networks read them: one-hot
  /// [..., |A|] or unchanged.
  torch::Tensor network_actions(const torch::Tensor& actions) const;

 private:
  bool discrete_;
  int64_t num_actions_;
};
TORCH_MODULE(OffPolicyAgent);

/// The actor acting step by step with its carried memory (rollouts, evaluation, `rlm eval`).
class OffPolicyActingPolicy : public ActingPolicy {
 public:
  OffPolicyActingPolicy(OffPolicyAgent agent, std::shared_ptr<const OffPolicyAlgorithm> algorithm,
                        torch::Device device);
  void begin(int64_t num_envs) override;
  torch::Tensor act(const torch::Tensor& obs, const torch::Tensor& prev_actions, const torch::Tensor& prev_rewards,
                    const torch::Tensor& starts, bool deterministic, const torch::Generator& generator) override;

 private:
  OffPolicyAgent agent_;
  std::shared_ptr<const OffPolicyAlgorithm> algorithm_;
  torch::Device device_;
  memory::MemoryState state_;
};

/// Statistics of gradient updates (means over the updates they cover).
struct OffPolicyUpdateStats {
  double critic_loss = 0, actor_loss = 0, alpha = 0, alpha_loss = 0, entropy = 0, q_mean = 0;
  int64_t updates = 0;
  void add(const OffPolicyUpdateStats& one);
  void finish();  ///< sums -> means
  nlohmann::json to_json() const;
  static OffPolicyUpdateStats from_json(const nlohmann::json& j);
};

class OffPolicyTrainer : public Trainer {
 public:
  OffPolicyTrainer(const Config& config, std::filesystem::path run_dir);
  ~OffPolicyTrainer() override;
  ResumeReport resume() override;
  TrainSummary train(const std::function<bool()>& stop_requested = {}) override;

  /// One gradient step on `batch` (critic, actor, target networks, α, in pomdp-baselines' order), with the
  /// reparameterisation and smoothing noise drawn from `generator`.
  OffPolicyUpdateStats update(const ReplayBatch& batch, const torch::Generator& generator);
  /// The window batch of update number `update_index` (its draws derive from the seed and that number).
  ReplayBatch sample_batch(int64_t update_index) const;

  OffPolicyAgent& agent() { return agent_; }
  EpisodeReplay& replay() { return *replay_; }
  const ActionSpec& action_spec() const { return spec_; }
  int64_t updates() const { return updates_; }

 private:
  int64_t updates_due(int64_t new_steps, bool warmup_just_ended) const;
  nlohmann::json trainer_state() const;
  void save();
  NamedOptimizers optimizers();
  [[noreturn]] void diverged(const std::string& what) const;
  double alpha() const;
  /// The seed of the run's stream `path` (core/seed.hpp).
  uint64_t stream(std::initializer_list<uint64_t> path) const {
    return derive_seed(static_cast<uint64_t>(config_.experiment.seed), path);
  }

  Config config_;
  std::filesystem::path run_dir_;
  torch::Device device_;
  std::shared_ptr<const OffPolicyAlgorithm> algorithm_;  ///< what sets sac, sacd and td3 apart
  std::unique_ptr<envs::VecEnv> envs_;
  std::unique_ptr<TaskSplitEvaluator> evaluator_;  ///< the deterministic evaluations, on envs of their own
  ActionSpec spec_;
  OffPolicyAgent agent_{nullptr};
  std::unique_ptr<torch::optim::Adam> critic_optimizer_, actor_optimizer_, alpha_optimizer_;
  std::unique_ptr<EpisodeReplay> replay_;
  std::unique_ptr<MetricsLogger> metrics_;
  int64_t seq_len_ = 0;
  double target_entropy_ = 0;
  // Trainer state saved in checkpoints.
  int64_t iteration_ = 0, env_steps_ = 0, episodes_ = 0, updates_ = 0;
  int64_t pending_updates_ = 0;  ///< updates still due in the current iteration (a stop can fall between two)
  // The current iteration's figures so far, kept across a stop between its updates so its metrics row is complete.
  OffPolicyUpdateStats iteration_stats_;
  double iteration_return_ = 0, iteration_length_ = 0, iteration_success_ = 0;
  int64_t next_eval_episodes_ = 0;
  double elapsed_seconds_ = 0;
  /// The iteration's updates are done and counted (iteration_ incremented), its evaluation, metrics row and
  /// checkpoint not yet: a stop during a long evaluation saves this, and the resumed run evaluates first.
  bool tail_pending_ = false;
  double tail_seconds_ = 0, tail_collect_seconds_ = 0;  ///< the pending iteration's timings, for its row
  int64_t saved_iteration_ = -1, saved_updates_ = -1;
};

/// The algorithm of algo.type (its trainer_rows() row), for the off-policy types.
std::shared_ptr<const OffPolicyAlgorithm> off_policy_algorithm(const Config& config);

/// The off-policy agent and a policy acting with its actor, for evaluation (trainer_rows()).
PolicyModel off_policy_policy_model(const Config& config, const ObservationLayout& obs, const ActionSpec& spec,
                                    const torch::Device& device);

}  // namespace rlm::agents
