// The task split of a meta-RL env (pomdp-baselines@28cb5dd:policies/learner.py): the learner's np.random.permutation of
// the n tasks gives train = perm[:n_train] and eval = perm[n_train:] (the reference's perm[−n_eval:], the same with
// n_train + n_eval = n as in every paper config). Training episodes draw a task uniformly from their split; the
// reference's evaluation instead plays every eval task once (and train_tasks[:n_eval]), which pin() serves.
#pragma once
#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::meta {

class TaskSplit {
 public:
  TaskSplit() = default;
  /// `perm`: the learner's permutation of the env's tasks; `split`: train | eval (env.options.task_split).
  TaskSplit(const std::string& id, const std::vector<int>& perm, int n_train, const std::string& split) {
    if (split == "train") {
      tasks_.assign(perm.begin(), perm.begin() + n_train);
    } else if (split == "eval") {
      tasks_.assign(perm.begin() + n_train, perm.end());
    } else {
      throw EnvError(fmt::format("{}: task_split must be train or eval, got '{}'", id, split));
    }
  }

  const std::vector<int>& tasks() const { return tasks_; }  ///< the split's tasks, in the learner's order
  int size() const { return static_cast<int>(tasks_.size()); }

  /// The task of a new episode: one drawn uniformly from the split, or the pinned one. The draw happens either way,
  /// so pinning changes nothing else an episode draws after it (Point Robot's start states).
  int next(Rng& rng) const {
    const int drawn = tasks_[rng.uniform_int(tasks_.size())];
    return pinned_ >= 0 ? tasks_[static_cast<size_t>(pinned_)] : drawn;
  }

  /// TaskSplitEnv::pin_task: following episodes play split task `index` (in split order); −1 draws again.
  void pin(const std::string& id, int index) {
    if (index < -1 || index >= size())
      throw EnvError(fmt::format("{}: pin_task({}) is outside the split's {} tasks", id, index, size()));
    pinned_ = index;
  }

 private:
  std::vector<int> tasks_;
  int pinned_ = -1;
};

}  // namespace rlm::envs::meta
