// Key-to-Door (twni2016/Memory-RL@c9b8b39:envs/key_to_door/key_to_door.py through tvt_wrapper.KeyToDoor with the "SR"
// reward room, a port of DeepMind's TVT pycolab task; docs/envs/memory_rl.md). Three phases on 7×11 boards, seen
// through the 5×5 RGB window centred on the player (pycolab_view.hpp), actions Discrete(4) = N, S, W, E:
//   1. explore: a walled room; the key lies on one of its 10 upper cells (rows 1-2, cols 3-7, uniform), the player
//      starts on one of its 10 lower cells (rows 4-5, uniform), the two halves joined through row 3 cols 4-6. Stepping
//      on the key picks it up (has_key, which later phases see) and hides it; on that frame only, a white indicator
//      'i' shows at (0, 5) over the top wall, always inside the view then. Z-order: key, indicator, player.
//   2. distractor (distractor_phase.hpp): D frames of apple collecting.
//   3. reward: the player starts at (3, 5) in a small room whose top wall has a door at (1, 5). The door blocks unless
//      the key is held (the player's impassable set drops 'd' for good the first frame it sees has_key, the phase's
//      frame-0 pass included); entering it with the key pays final_reward once and drops the key. Two moves north.
//      The door is drawn over the player (z-order player, door), so standing on it shows the door colour.
// Settings (env.options.variant; distractor_length overrides D, 0 keeps the variant's):
//   shm       SHM's pomdp-baselines KeytoDoor-SR-v0: explore 10, D 100, reward 3, final reward 10;
//   original  Memory-RL configs/envs/keytodoor.py ("SR-{D}-v0"): 15, D 60, 10, final reward 5.
// Both: apple reward 1, 10 apples, respawn after 20 frames.
// The episode lasts explore + D + reward steps and ends terminated (Memory-RL's finite_horizon_terminal). Success (on
// the last step only, as the reference's info["success"]): the reward phase paid more than 0. Return = apples eaten +
// final_reward · success, within [0, #apples + final].
//
// Deliberate difference from the reference: its key cell, start cell and apple cells come from numpy's global
// generator, each drawn when its phase is built; here all come from the env's Rng, reseeded by reset(seed), at reset
// (the same distributions; an episode is a function of its seed).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/env_extensions.hpp"
#include "envs/memory_rl/pycolab_board.hpp"
#include "envs/memory_rl/pycolab_story.hpp"
#include "envs/memory_rl/pycolab_view.hpp"

namespace rlm::envs::memory_rl {

struct KeyToDoorConfig {
  std::string variant = "shm";  ///< shm | original: the phase lengths and final reward above
  int distractor_length = 0;    ///< D; 0: the variant's (shm 100, original 60)
};

/// What one episode draws (the golden replays restore these).
struct KeyToDoorEpisode {
  pycolab::Cell key_cell;
  pycolab::Cell start_cell;
  uint32_t apples = 0;  ///< the distractor phase's apples, a mask over DistractorPhase::candidates()
};

class KeyToDoor final : public PycolabStory, public GoldenReplayEnv {
 public:
  using Config = KeyToDoorConfig;
  KeyToDoor(std::string id, const KeyToDoorConfig& config);

  void reset(uint64_t seed, std::span<float> obs) override;

  /// Test hook for the golden replays: starts an episode with the recorded draws ("key_cell", "start_cell",
  /// "apple_cells": [[row, col], ...]).
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  static constexpr pycolab::Cell kIndicatorCell{0, 5}, kDoorCell{1, 5}, kRewardStart{3, 5};

  const KeyToDoorEpisode& episode() const { return episode_; }
  const std::vector<pycolab::Cell>& key_cells() const { return key_cells_; }
  const std::vector<pycolab::Cell>& start_cells() const { return start_cells_; }
  bool has_key() const { return has_key_; }
  bool indicator_visible() const { return indicator_visible_; }

 private:
  void start_episode(const KeyToDoorEpisode& episode, std::span<float> obs);
  void start_phase() override;
  float update(int64_t action, int frame) override;
  void move_player(int64_t action);  // Key-to-Door's PlayerSprite: opens the door once the key is held
  void render();                     // explore and reward phases: rendered_ from their entities

  std::vector<pycolab::Cell> key_cells_, start_cells_;  // the explore art's 'k' and '+' cells
  KeyToDoorEpisode episode_;
  bool has_key_ = false;  // the Plot's has_key: carried across phases
  bool key_visible_ = true, indicator_visible_ = false;
  int pickup_frame_ = 0;    // the frame the indicator showed (0: not yet; the key is never under the start)
  bool door_open_ = false;  // 'd' left the player's impassable set (a phase's player starts with it)
};

}  // namespace rlm::envs::memory_rl
