// Wind, the pomdp-baselines meta-RL toy (twni2016/pomdp-baselines@28cb5dd:envs/meta/toy_navigation/wind.py) in its
// original and SHM forms (docs/envs/meta.md). A point starts at (0, 0) and must reach a hidden fixed goal (0, 1) under
// a hidden constant wind w, the task: s ← s + a + w, reward 1 while ‖s − (0, 1)‖ ≤ goal_radius, else 0, for H steps.
// The agent infers w from how its actions move it (a = −w hovers on the goal).
// Task sets as the reference builds them: np.random.seed(1337), then [U(−W, W), U(−W, W)] per task, and the learner's
// np.random.permutation splits them into train = perm[:n_train] and eval = perm[−n_eval:] (NumpyLegacyRng, so the
// lists equal the papers'). Each episode plays a task drawn uniformly from its split (env.options.task_split; the
// off-policy trainer's evaluation envs use the eval split).
//   original (pomdp-baselines): 60 tasks, W = 0.08, H = 75, radius 0.03, 40 train / 20 eval;
//   shm (SHM paper §4.1, SHM's code): 200 tasks, W = 0.1, H = 100, radius 0.01, 50/150 (or train_tasks = 10: 10/190).
// Actions: Box(−1, 1, (2,)), mapped as pomdp-baselines' VariBadWrapper does onto the env's Box(−0.1, 0.1) float32:
// clip to [−1, 1], lb + (a + 1)·0.5·(ub − lb), clip to [lb, ub], all in float32 as numpy computes it on the policy's
// float32 action; the state adds that float32 value in float64. One episode per task (VariBad k = 1), so no
// done_mdp flag. Replayed bit for bit against trajectories recorded from pomdp-baselines' and SHM's code
// (test_golden_meta_toys.cpp).
// Obs: s as float32 (the reference returns float64). The episode ends after H steps, reported as truncated (the
// learner bootstraps through a time-out). Success: the goal was reached at some step.
// As a TaskSplitEnv (envs/env_extensions.hpp) it tells the episode's task and is_goal_state() after each step
// (pomdp-baselines' learner stores it as the replay's terminal flag while the episode goes on:
// algo.off_policy.goal_state_terminal), and pin_task() plays a given split task, for the reference's evaluation of
// every held-out task once. As a GoldenReplayEnv it starts an episode on a recorded task, {"task": k}, so that the
// recordings replay through the Python package too.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/meta/task_split.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::meta {

struct WindConfig {
  std::string variant = "shm";       ///< shm | original
  int train_tasks = 0;               ///< 0: the variant's split (50 of 200; 40 of 60)
  std::string task_split = "train";  ///< train | eval: the tasks episodes draw from
};

class Wind final : public Env, public TaskSplitEnv, public GoldenReplayEnv {
 public:
  using Config = WindConfig;
  Wind(std::string id, WindConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return horizon_; }
  bool reports_success() const override { return true; }
  int split_size() const override { return split_.size(); }
  void pin_task(int index) override { split_.pin(id_, index); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// Starts an episode on task `task` (an index into winds()), for tests.
  void reset_task(int task, std::span<float> obs);
  /// reset_task() from {"task": k}.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  const std::vector<std::array<double, 2>>& winds() const { return winds_; }
  const std::vector<int>& split_tasks() const { return split_.tasks(); }  ///< the tasks of this env's split, in order
  int task() const override { return task_; }
  double goal_radius() const { return goal_radius_; }
  const std::array<double, 2>& state() const { return state_; }
  /// WindEnv.is_goal_state(): the state within goal_radius of the goal (0, 1), the test that gives the reward.
  bool is_goal_state() const override;

 private:
  std::string id_;
  Space observation_space_;
  Space action_space_ = Space::box({-1, -1}, {1, 1});
  Rng rng_;
  std::vector<std::array<double, 2>> winds_;
  TaskSplit split_;
  int64_t horizon_;
  double goal_radius_;
  int task_ = 0;
  std::array<double, 2> state_{};
  int64_t t_ = 0;
  bool reached_ = false, running_ = false;
};

}  // namespace rlm::envs::meta
