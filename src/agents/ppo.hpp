// Recurrent PPO with RLlib 2.3's semantics as POPGym runs it (docs/trainers/ppo.md). See ppo.cpp.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "agents/acting_graph.hpp"
#include "agents/action_distribution.hpp"
#include "agents/actor_critic.hpp"
#include "agents/experiment_config.hpp"
#include "agents/trainer.hpp"
#include "envs/vec_env.hpp"

namespace rlm {
class MetricsLogger;
class ProgressLine;
}  // namespace rlm

namespace rlm::agents {

class PpoTrainer : public Trainer {
 public:
  /// Builds envs, model and optimizer; run_dir receives metrics and checkpoints.
  PpoTrainer(const Config& config, std::filesystem::path run_dir);
  ~PpoTrainer() override;
  /// Restores the newest usable checkpoint of run_dir, falling back to older ones when a newer one is corrupt or
  /// does not match the model (throws CheckpointError if none is usable), then applies the config's optimiser
  /// settings (algo.ppo.lr, algo.ppo.adam_eps), which a resume may change.
  ResumeReport resume() override;
  /// Trains until algo.total_steps env steps have been collected, or until `stop_requested` returns true. It is
  /// checked at every env step and minibatch: a stop at the end of an iteration checkpoints it; a stop inside one
  /// abandons the iteration and checkpoints the state it started from (unless that is on disk already), so a resumed
  /// run repeats it exactly. Throws DivergenceError, without checkpointing, when a loss, gradient norm or parameter is
  /// not finite or the mean KL exceeds algo.ppo.max_kl.
  TrainSummary train(const std::function<bool()>& stop_requested = {}) override;
  ActorCritic& model() { return model_; }
  torch::optim::Optimizer& optimizer() { return *optimizer_; }

 private:
  struct Rollout;
  struct Batch;
  struct LossStats;
  /// nullopt when stop_requested turned true before the rollout was complete.
  std::optional<Rollout> collect_rollout(const std::function<bool()>& stop_requested);
  Batch make_batch(Rollout& rollout) const;
  /// nullopt when stop_requested turned true between two minibatches.
  std::optional<LossStats> update(const Batch& batch, const std::function<bool()>& stop_requested);
  void save(bool force);
  nlohmann::json trainer_state() const;
  [[noreturn]] void diverged(const std::string& what) const;

  Config config_;
  std::filesystem::path run_dir_;
  torch::Device device_;
  std::unique_ptr<envs::VecEnv> envs_;
  ActionSpec action_spec_;
  ActorCritic model_{nullptr};
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::unique_ptr<MetricsLogger> metrics_;
  /// Acting on a GPU with experiment.cuda_graphs (agents/acting_graph.hpp): made at the first rollout, kept for all.
  std::unique_ptr<ActingGraph> acting_graph_;
  bool acting_reported_ = false;      ///< the log said whether acting replays a graph
  ProgressLine* progress_ = nullptr;  ///< set while train() runs
  int64_t saved_iteration_ = -1;      ///< the iteration whose state is the newest checkpoint on disk
  // Trainer state saved in checkpoints.
  int64_t iteration_ = 0;
  int64_t env_steps_ = 0;
  int64_t episodes_ = 0;
  double kl_coeff_ = 0.0;
  double elapsed_seconds_ = 0.0;
};

/// PPO's ActorCritic and a policy acting with it (stepped with T = 1), for evaluation (trainer_rows()).
PolicyModel ppo_policy_model(const Config& config, const ObservationLayout& obs, const ActionSpec& spec,
                             const torch::Device& device);

}  // namespace rlm::agents
