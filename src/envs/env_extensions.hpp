// Optional interfaces beside the Env contract, for the few envs that need more: the meta-RL envs' task split and
// goal states, and Visual Match's per-instance draw. An env implements one by deriving from it as well as from Env;
// a caller finds it under any wrappers with find_extension<I>(env), so wrappers need not forward it.
#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <span>

#include "envs/env.hpp"
#include "envs/wrappers.hpp"

namespace rlm::envs {

/// Envs whose episodes play tasks of a fixed split (Wind and Point Robot; env.options.task_split), as
/// twni2016/pomdp-baselines@28cb5dd:policies/learner.py splits and evaluates them.
class TaskSplitEnv {
 public:
  virtual ~TaskSplitEnv() = default;
  /// The number of tasks in this env's split.
  virtual int split_size() const = 0;
  /// Makes the following resets play the split's task `index` (in split order) instead of one drawn uniformly; −1
  /// draws again. Evaluation uses it to play every held-out task once, as the reference does. Throws rlm::EnvError
  /// for an index outside the split.
  virtual void pin_task(int index) = 0;
  /// The current episode's task: its index in the env's whole task list.
  virtual int task() const = 0;
  /// Whether the current state is a goal state (pomdp-baselines' is_goal_state(), which its learner stores after every
  /// step as the replay's terminal flag while the episode goes on).
  virtual bool is_goal_state() const = 0;

 protected:
  TaskSplitEnv() = default;
  TaskSplitEnv(const TaskSplitEnv&) = default;
  TaskSplitEnv& operator=(const TaskSplitEnv&) = default;
};

/// Envs that draw something once per instance rather than per episode (Visual Match's colour permutation, which the
/// reference shuffles once in Game.__init__). VecEnv seeds env i once, when it builds it, with a seed derived from its
/// own and i, so a run resumed from a checkpoint rebuilds the same instances; an env never seeded behaves as if given
/// 0.
class InstanceSeededEnv {
 public:
  virtual ~InstanceSeededEnv() = default;
  virtual void seed_instance(uint64_t seed) = 0;

 protected:
  InstanceSeededEnv() = default;
  InstanceSeededEnv(const InstanceSeededEnv&) = default;
  InstanceSeededEnv& operator=(const InstanceSeededEnv&) = default;
};

/// Envs whose golden tests replay episodes recorded from their reference (tests/data): the reference's hidden state at
/// an episode's start put in place of a reset, and, for envs whose steps draw randomness, the reference's draws put in
/// place of the env's own. The C++ tests call these on the env types; the Python package's tests reach them through
/// this interface (python/csrc/module.cpp), so that the same recordings replay through the Python API.
class GoldenReplayEnv {
 public:
  virtual ~GoldenReplayEnv() = default;
  /// Starts an episode from the recorded state (its format is the env's recorder's) and writes the first obs.
  virtual void restore_golden(const nlohmann::json& state, std::span<float> obs) = 0;
  /// The next step uses `draws` instead of drawing; envs whose steps draw nothing refuse any draw.
  virtual void inject_draws(std::span<const double> draws);

 protected:
  GoldenReplayEnv() = default;
  GoldenReplayEnv(const GoldenReplayEnv&) = default;
  GoldenReplayEnv& operator=(const GoldenReplayEnv&) = default;
};

/// The `Extension` that `env` or an env it wraps implements, or nullptr.
template <class Extension>
Extension* find_extension(Env& env) {
  for (Env* e = &env;;) {
    if (auto* found = dynamic_cast<Extension*>(e)) return found;
    auto* wrapper = dynamic_cast<Wrapper*>(e);
    if (wrapper == nullptr) return nullptr;
    e = &wrapper->inner();
  }
}

}  // namespace rlm::envs
