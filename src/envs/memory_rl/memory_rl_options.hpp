// The env.options that Memory-RL's tasks read (YAML keys flat in env.options; envs/env_config.hpp composes them):
// T-maze's corridor, and the distractor phase of the pycolab tasks (Visual Match, Key-to-Door). The registry row of
// each task names the groups it reads (envs/registry.cpp), so a key set for another env is a config error.
#pragma once
#include "core/config_schema.hpp"

namespace rlm::envs::memory_rl {

/// T-maze (twni2016/Memory-RL@c9b8b39:envs/tmaze.py).
struct TMazeOptions {
  /// Corridor length Lc; the episode is Lc + 1 steps (passive) or Lc + 3 (active), the per-step penalty −1/Lc as
  /// Memory-RL's configs set it (paper lengths: passive 50…1500, active 20…500).
  int corridor_length = 10;
  /// Reward for standing on the oracle cell x = 0 (Memory-RL's distract_reward; 0 in the paper).
  double distract_reward = 0.0;

  template <class V>
  void visit(V& v) {
    v.field("corridor_length", corridor_length, in_range(1, 1000000));
    v.field("distract_reward", distract_reward, any_number());
  }
  bool operator==(const TMazeOptions&) const = default;
};

/// Visual Match and Key-to-Door (docs/envs/memory_rl.md); their phase lengths otherwise come from env.options.variant.
struct DistractorOptions {
  /// Frames D of the apple-collecting distractor phase (papers: 60…1000); 0 = the variant's default (shm 100,
  /// original 60).
  int distractor_length = 0;

  template <class V>
  void visit(V& v) {
    v.field("distractor_length", distractor_length, in_range(0, 100000));
  }
  bool operator==(const DistractorOptions&) const = default;
};

}  // namespace rlm::envs::memory_rl
