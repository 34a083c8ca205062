// The clock of a pycolab Story of three chapters (explore, distractor, reward) as Memory-RL's TimerSprite
// (envs/key_to_door/common.py) runs it. Each phase counts frames from 0; building a phase runs a frame-0 pass with no
// action. Every agent step is frame + 1, and the timer, updated last, ends the phase once frame >= its length, so a
// phase lasts exactly that many steps. The step that ends a phase returns the next phase's first (frame-0) observation,
// never the old phase's last frame; the step that ends the reward phase ends the episode with that phase's last frame.
#pragma once
#include <array>

namespace rlm::envs::memory_rl::pycolab {

enum Phase : int { kExplore = 0, kDistractor = 1, kReward = 2 };

struct StoryTimer {
  std::array<int, 3> lengths{};  ///< frames of explore, distractor, reward
  Phase phase = kExplore;
  int frame = 0;

  int total() const { return lengths[0] + lengths[1] + lengths[2]; }
  void restart() {
    phase = kExplore;
    frame = 0;
  }
  /// One agent step: the new frame number. The step's updates run at this frame; then phase_over() says whether the
  /// timer ends the phase on it.
  int tick() { return ++frame; }
  bool phase_over() const { return frame >= lengths[phase]; }
  void next_phase() {
    phase = static_cast<Phase>(phase + 1);
    frame = 0;
  }
};

}  // namespace rlm::envs::memory_rl::pycolab
