// The numbers that set up a pycolab task's story: phase lengths and the final reward, per env.options.variant (SHM's
// pomdp-baselines registration or Memory-RL's configs), with env.options.distractor_length overriding the distractor
// phase. Visual Match and Key-to-Door each pass their two rows.
#pragma once
#include <fmt/format.h>

#include <string>

#include "core/error.hpp"

namespace rlm::envs::memory_rl::pycolab {

struct StorySettings {
  int explore, distractor, reward;  ///< phase lengths in frames
  float final_reward;
};

/// The row of `variant` (shm or original), its distractor replaced by `distractor_length` when that is > 0. Throws
/// rlm::EnvError naming the env id for an unknown variant or a length outside [0, 100000].
inline StorySettings story_settings(const std::string& id, const std::string& variant, int distractor_length,
                                    StorySettings shm, StorySettings original) {
  StorySettings s;
  if (variant == "shm")
    s = shm;
  else if (variant == "original")
    s = original;
  else
    throw EnvError(fmt::format("{}: variant must be shm or original, got '{}'", id, variant));
  if (distractor_length < 0 || distractor_length > 100000)
    throw EnvError(fmt::format("{}: distractor_length must be in [0, 100000], got {}", id, distractor_length));
  if (distractor_length > 0) s.distractor = distractor_length;
  return s;
}

}  // namespace rlm::envs::memory_rl::pycolab
