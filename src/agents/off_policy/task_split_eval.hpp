// The off-policy trainer's evaluation (agents/off_policy.hpp): the deterministic policy on eval envs of its own.
// Envs with a task split (meta-RL: Wind, Point Robot) are evaluated on their held-out tasks and also on their
// training tasks, as pomdp-baselines logs success_rate_eval and success_rate_train
// (twni2016/pomdp-baselines@28cb5dd:policies/learner.py, evaluate()); with algo.off_policy.eval_each_task each task
// of a split is played once.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agents/action_distribution.hpp"
#include "agents/experiment_config.hpp"
#include "agents/off_policy/algorithm.hpp"
#include "envs/vec_env.hpp"

namespace rlm::agents {

class OffPolicyAgent;

class TaskSplitEvaluator {
 public:
  /// One evaluation's figures; NaN where they do not apply (no evaluation, no notion of success, no tasks).
  struct Result {
    double return_mean, return_std, success_rate;
    double episodes, distinct_tasks;
    static Result none();
  };
  /// The held-out split's (every env's eval envs) and the training split's (envs with a task split only).
  struct Results {
    Result held_out = Result::none(), train_split = Result::none();
  };

  /// Builds the eval envs; `seed` is the run's seed.
  TaskSplitEvaluator(const Config& config, uint64_t seed);

  /// Plays both splits with `agent`'s deterministic policy, the streams derived from the run's seed and `episodes`
  /// (the training episodes so far). nullopt when `stop` turned true first: every eval env's episode counters are
  /// then as they were, so a resumed run plays the same evaluation.
  std::optional<Results> run(OffPolicyAgent& agent, const std::shared_ptr<const OffPolicyAlgorithm>& algorithm,
                             const ActionSpec& spec, const torch::Device& device, int64_t episodes,
                             const std::function<bool()>& stop);

  /// The metrics after the return's (success rate, and the training split's figures for envs with a task split).
  void append_scalars(const Results& results, bool reports_success,
                      std::vector<std::pair<std::string, double>>& scalars) const;

  /// The eval envs' episode counters, for the trainer state, and their restoring.
  void save_state(nlohmann::json& trainer_state) const;
  void restore_state(const nlohmann::json& trainer_state);

 private:
  std::optional<Result> evaluate(envs::VecEnv& envs, uint64_t split, OffPolicyAgent& agent,
                                 const std::shared_ptr<const OffPolicyAlgorithm>& algorithm, const ActionSpec& spec,
                                 const torch::Device& device, int64_t episodes, const std::function<bool()>& stop);
  /// How many tasks of `envs`' split an evaluation plays once each (eval_each_task); 0: eval_episodes episodes on
  /// tasks drawn at random (envs without a task split, or eval_each_task off).
  int each_task_tasks(const envs::VecEnv& envs, uint64_t split) const;

  uint64_t seed_;
  bool memory_draws_on_device_;  ///< experiment.memory_draws_on_device, as the training acting uses
  int eval_episodes_;
  bool eval_each_task_;
  std::unique_ptr<envs::VecEnv> held_out_envs_;
  std::unique_ptr<envs::VecEnv> train_split_envs_;  ///< null for envs without a task split
};

}  // namespace rlm::agents
