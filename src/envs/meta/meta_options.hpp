// The env.options that the meta-RL envs (Wind, Point Robot) read besides env.options.variant: their fixed task split
// (twni2016/pomdp-baselines@28cb5dd:policies/learner.py; YAML keys flat in env.options, composed in
// envs/env_config.hpp).
#pragma once
#include <string>

#include "core/config_schema.hpp"

namespace rlm::envs::meta {

struct TaskSplitOptions {
  /// Training tasks of the fixed split (SHM: 50 or 10 of 200; original Wind 40 of 60, Point Robot 80 of 100);
  /// 0 = the variant's default.
  int train_tasks = 0;
  /// Which tasks episodes draw from, train or eval (the off-policy trainer's evaluation envs use eval).
  std::string task_split = "train";

  template <class V>
  void visit(V& v) {
    v.field("train_tasks", train_tasks, in_range(0, 199));
    v.field("task_split", task_split, one_of({"train", "eval"}));
  }
  bool operator==(const TaskSplitOptions&) const = default;
};

}  // namespace rlm::envs::meta
