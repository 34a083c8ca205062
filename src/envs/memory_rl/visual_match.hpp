// Visual Match, passive and active (twni2016/Memory-RL@c9b8b39:envs/key_to_door/visual_match.py through
// tvt_wrapper.VisualMatch, a port of DeepMind's TVT pycolab task; docs/envs/memory_rl.md). Three phases on 7×11 boards,
// seen through the 5×5 RGB window centred on the player (pycolab_view.hpp), actions Discrete(4) = N, S, W, E:
//   1. explore: one cell shows the episode's target colour, which the agent must remember.
//      Passive: the player sits at (2, 5), walled in by the 8 surrounding cells, one of which (uniform, diagonals
//      included) is the colour; every move is blocked, the colour is always in view.
//      Active: two rooms (rows 1-2 and 4-5, joined through row 3 cols 4-6) inside 26 wall cells, one of which
//      (uniform) is the colour; the player starts on one of the 10 cells of the lower room (uniform) and must walk
//      until the colour is in view. The colour cell blocks (it is in the player's impassable set).
//   2. distractor (distractor_phase.hpp): D frames of apple collecting.
//   3. reward: the player starts at (5, 5) below a room with three objects b, c, e at (1, 2), (1, 5), (1, 8). Entering
//      one is the episode's single choice: final_reward if its colour is the target colour, 0 otherwise, and all three
//      vanish. Objects are drawn over the player (z-order player, b, c, e) but vanish on contact, so it never shows.
// Colours: b, c, e show red, green and blue (hues 0, 1/3, 2/3 at full saturation: (255, 0, 0), (0, 255, 0),
// (0, 0, 255)) in a permutation fixed per env instance; the target is b, c or e (uniform) per episode, so a fixed
// instance shows a given colour always at the same reward-phase position.
// Settings (env.options.variant; distractor_length overrides D, 0 keeps the variant's):
//   shm       SHM's pomdp-baselines VisualMatch-SR-v0: explore 15, D 100, reward 10, final reward 10;
//   original  Memory-RL configs/envs/visual_match.py ("passive-visual-{D}-v0"): 15, D 60, 15, final reward 5.
// Both: apple reward 1, 10 apples, respawn after 20 frames. Neither code base registers the active task; it takes the
// same settings with the active explore grid (the reference's passive=False).
// The episode lasts explore + D + reward steps and ends terminated (Memory-RL's finite_horizon_terminal). Success (on
// the last step only, as the reference's info["success"]): the reward phase paid more than 0. Return = apples eaten +
// final_reward · success, within [0, #apples + final].
//
// Deliberate differences from the reference:
// - Random draws: the reference draws the target from the instance's unseeded RandomState and the target cell, start
//   cell and apple cells from numpy's global generator (each when its phase is built). Here all come from the env's
//   Rng, reseeded by reset(seed), at reset: the same distributions, and an episode is a function of its seed.
// - The colour permutation: the reference shuffles once per instance, in Game.__init__, with that unseeded RandomState
//   (so Memory-RL's train and eval envs get independent permutations). Here it is drawn from the instance seed
//   (InstanceSeededEnv::seed_instance; 0 until one is given): VecEnv gives env i of a run a seed derived from the run's
//   seed and i, so the instances differ from each other and between the training and evaluation envs, as in the
//   reference, and a run resumed from a checkpoint rebuilds the same ones.
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

struct VisualMatchConfig {
  bool passive = true;
  std::string variant = "shm";  ///< shm | original: the phase lengths and final reward above
  int distractor_length = 0;    ///< D; 0: the variant's (shm 100, original 60)
};

/// What one episode draws (the golden replays restore these).
struct VisualMatchEpisode {
  int target = 0;             ///< 0 b, 1 c, 2 e
  pycolab::Cell target_cell;  ///< the explore phase's colour cell
  pycolab::Cell start_cell;   ///< the explore phase's start ((2, 5) when passive)
  uint32_t apples = 0;        ///< the distractor phase's apples, a mask over DistractorPhase::candidates()
};

class VisualMatch final : public PycolabStory, public GoldenReplayEnv, public InstanceSeededEnv {
 public:
  using Config = VisualMatchConfig;
  VisualMatch(std::string id, const VisualMatchConfig& config);

  void seed_instance(uint64_t seed) override;
  void reset(uint64_t seed, std::span<float> obs) override;

  /// Test hook for the golden replays: fixes the colour permutation ({"colours": [hue of b, c, e]}, hue k = k/3) and
  /// starts an episode with the recorded draws ("target": "b"|"c"|"e", "target_cell", "start_cell", "apple_cells":
  /// [[row, col], ...]).
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  /// The colour shown by b, c, e: hue index 0 red, 1 green, 2 blue.
  const std::array<int, 3>& colours() const { return hues_; }
  const VisualMatchEpisode& episode() const { return episode_; }
  const std::vector<pycolab::Cell>& target_cells() const { return target_cells_; }
  const std::vector<pycolab::Cell>& start_cells() const { return start_cells_; }
  bool objects_visible() const { return objects_visible_; }

 private:
  void set_colours(const std::array<int, 3>& hues);
  void start_episode(const VisualMatchEpisode& episode, std::span<float> obs);
  void start_phase() override;
  float update(int64_t action, int frame) override;
  void render();  // explore and reward phases: rendered_ from their entities

  const pycolab::Art* explore_art_;
  std::vector<pycolab::Cell> target_cells_, start_cells_;  // the explore art's 'p' and '+' cells
  std::array<int, 3> hues_{0, 1, 2};

  VisualMatchEpisode episode_;
  char explore_impassable_[3] = {'#', 'b', '\0'};  // walls and the target colour
  bool objects_visible_ = true;
};

}  // namespace rlm::envs::memory_rl
