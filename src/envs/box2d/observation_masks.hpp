// Which observation elements the -P (positions) and -V (velocities) variants of the Box2D tasks keep.
// LunarLander: the LunarLander-{P,V}-v0 split of twni2016/pomdp-baselines@28cb5dd:envs/pomdp/__init__.py, leg
// contacts kept in both. BipedalWalker has no published split; ours (docs/envs/box2d.md), by analogy with
// pomdp-baselines' WalkerBLT (Walker2DBullet) split: lidar measures range geometry, so it counts as a
// position (option lidar_in_p) and is never in V; contacts belong to P (option contacts_in_v adds them to V).
#pragma once
#include <string_view>
#include <vector>

namespace rlm::envs::box2d {

/// Obs indices kept by a mask, ascending, and those of them that are 0/1 flags.
struct ObservationMask {
  std::vector<int> kept;
  std::vector<int> binary;  ///< full-obs indices of the 0/1 flags (the leg contacts), whether kept or not
};

/// LunarLander's 8 floats: x, y, vx, vy, angle, angular velocity, leg contacts. `variant` is "F", "P" or "V".
inline ObservationMask lunar_lander_mask(std::string_view variant) {
  const std::vector<int> binary = {6, 7};
  if (variant == "P") return {{0, 1, 4, 6, 7}, binary};
  if (variant == "V") return {{2, 3, 5, 6, 7}, binary};
  return {{0, 1, 2, 3, 4, 5, 6, 7}, binary};
}

/// BipedalWalker's 24 floats: hull angle, angular velocity, vx, vy; per leg hip angle, hip speed, knee angle, knee
/// speed, contact (indices 4-8 and 9-13); 10 lidar ranges (14-23).
inline ObservationMask bipedal_walker_mask(std::string_view variant, bool contacts_in_v, bool lidar_in_p) {
  const std::vector<int> binary = {8, 13};
  std::vector<int> kept;
  if (variant == "P") {
    kept = {0, 4, 6, 8, 9, 11, 13};
    if (lidar_in_p)
      for (int i = 14; i < 24; ++i) kept.push_back(i);
  } else if (variant == "V") {
    kept = contacts_in_v ? std::vector<int>{1, 2, 3, 5, 7, 8, 10, 12, 13} : std::vector<int>{1, 2, 3, 5, 7, 10, 12};
  } else {
    for (int i = 0; i < 24; ++i) kept.push_back(i);
  }
  return {kept, binary};
}

}  // namespace rlm::envs::box2d
