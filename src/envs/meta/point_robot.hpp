// Point Robot (twni2016/pomdp-baselines@28cb5dd:envs/meta/toy_navigation/point_robot.py, SparsePointEnv, id
// PointRobotSparse-v0), the pomdp-baselines meta-RL toy in its original and SHM forms, inside pomdp-baselines'
// VariBadWrapper (envs/meta/wrappers.py) with k = 2 episodes per task (docs/envs/meta.md). A point must find a hidden
// goal g on the upper unit semicircle, the task: s ← s + a, reward 1 while ‖s − g‖ ≤ goal_radius, else 0. One episode
// of ours is the wrapper's whole BAMDP episode: two inner episodes of H steps on the same task, each from a fresh
// random start s₀ = [U(−1.5, 1.5), U(−0.5, 1.5)] (it may lie on the semicircle, even inside the goal radius), so a
// memory carries what the first one found into the second.
// Task sets as the reference builds them (NumpyLegacyRng, so the goal lists and splits equal the papers'): the
// constructor draws the parent PointEnv's n placeholder goals (discarded), a start state (reset_task(0)), the angles
// U(0, π) of the n goals (cos, sin) and a row shuffle, another start state; the learner's np.random.permutation then
// splits them into train = perm[:n_train] and eval = perm[n_train:] (the reference's perm[−n_eval:], the same with
// n_train + n_eval = n as in every paper config). Each episode plays a task drawn uniformly from its split
// (env.options.task_split; the off-policy trainer's evaluation envs use the eval split).
//   original (pomdp-baselines): 100 tasks, H = 60, radius 0.2, 80 train / 20 eval; the global numpy generator as
//     the config's seed 1 leaves it (system.reproduce), placeholders U(−1, 1);
//   shm (SHM paper's code): 200 tasks, H = 100, radius 0.05, 50/150 (or train_tasks = 10: 10/190);
//     np.random.seed(1337) in PointEnv.__init__, placeholders U(−10, 10).
// Actions: Box(−1, 1, (2,)), mapped as VariBadWrapper maps them onto the env's Box(−0.1, 0.1) float32: clip to
// [−1, 1], lb + (a + 1)·0.5·(ub − lb), clip to [lb, ub], all in float32 as numpy computes it on the policy's float32
// action; the state adds that float32 value in float64.
// Reward: the sparse one SparsePointEnv returns: 1 when −((x−gx)² + (y−gy)²)^0.5 ≥ −goal_radius after the move.
// Obs: [x, y, done_mdp], float32 (the reference returns float64): done_mdp is 1 on the last step of each inner
// episode. The boundary quirk, reproduced: at step H the obs is the terminal state (flag 1) while the env is already
// reset to the second start state, so the first action of the second inner episode is chosen from the terminal obs
// and applied to the fresh start (pomdp-baselines' learner ignores info["start_state"]).
// The episode ends after 2H steps, reported as truncated (the learner bootstraps through a time-out).
// Success, as pomdp-baselines' evaluation computes it: is_goal_state() (‖s − g‖ ≤ goal_radius via np.linalg.norm)
// after some step of the wrapper. That reads the env's current state, which after step H is already the second start
// state, not the terminal one; and the state before the first step is never checked.
// Replayed bit for bit against trajectories recorded from pomdp-baselines' and SHM's code (test_golden_meta_toys.cpp).
// Deliberate differences from the reference:
//   - start states and each episode's task come from our Rng (reseeded by reset's seed), not numpy's global
//     generator shared with the learner (the reference's BAMDP reset draws two start states and keeps the second);
//   - the original variant's goals are the ones of the config's seed 1; the reference rebuilds them from each run's
//     seed (only the SHM copy seeds the constructor);
//   - the reward is +0 outside the goal radius (the reference's −0.0);
//   - is_goal_state() sums dx² + dy² in plain double where numpy's norm uses BLAS ddot (which may fuse); the two can
//     differ in the last bit, which matters only for a state within an ulp of the goal radius.
// As a TaskSplitEnv (envs/env_extensions.hpp) it tells the episode's task and is_goal_state() after each step
// (pomdp-baselines' learner stores it as the replay's terminal flag while the episode goes on:
// algo.off_policy.goal_state_terminal), and pin_task() plays a given split task, for the reference's evaluation of
// every held-out task once. As a GoldenReplayEnv it starts an episode on a recorded task and start states,
// {"task": k, "start": [x, y], "second_start": [x, y]}, so that the recordings replay through the Python package too.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/meta/task_split.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::meta {

struct PointRobotConfig {
  std::string variant = "shm";       ///< shm | original
  int train_tasks = 0;               ///< 0: the variant's split (50 of 200; 80 of 100)
  std::string task_split = "train";  ///< train | eval: the tasks episodes draw from
};

class PointRobot final : public Env, public TaskSplitEnv, public GoldenReplayEnv {
 public:
  using Config = PointRobotConfig;
  using Point = std::array<double, 2>;
  PointRobot(std::string id, PointRobotConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return 2 * horizon_; }
  bool reports_success() const override { return true; }
  int split_size() const override { return split_.size(); }
  void pin_task(int index) override { split_.pin(id_, index); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// Starts an episode on task `task` (an index into goals()) from the given start states of the two inner
  /// episodes, for tests.
  void reset_task(int task, const Point& start, const Point& second_start, std::span<float> obs);
  /// reset_task() from {"task": k, "start": [x, y], "second_start": [x, y]}.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  const std::vector<Point>& goals() const { return goals_; }
  const std::vector<int>& split_tasks() const { return split_.tasks(); }  ///< the tasks of this env's split, in order
  int task() const override { return task_; }
  double goal_radius() const { return goal_radius_; }
  int64_t inner_horizon() const { return horizon_; }  ///< H, the steps of one inner episode
  const Point& state() const { return state_; }
  /// SparsePointEnv.is_goal_state() on the current state.
  bool is_goal_state() const override;

 private:
  std::string id_;
  Space observation_space_;
  Space action_space_ = Space::box({-1, -1}, {1, 1});
  Rng rng_;
  std::vector<Point> goals_;
  TaskSplit split_;
  int64_t horizon_;
  double goal_radius_;
  int task_ = 0;
  Point state_{}, second_start_{};
  int64_t t_ = 0;    ///< steps in the current inner episode
  int episode_ = 0;  ///< the inner episode, 0 or 1
  bool reached_ = false, running_ = false;
};

}  // namespace rlm::envs::meta
