// The apple-collecting distractor phase between the cue and the reward in Visual Match and Key-to-Door
// (twni2016/Memory-RL@c9b8b39:envs/key_to_door/common.py, distractor_phase and AppleDrape). Its job in the task is to
// fill the delay with rewarding work that has nothing to do with the cue, so the memory must hold the cue through it.
//
//   ###########      The player starts at (5, 5); 10 of the 22 checkerboard cells 'a' (row + col even, the start
//   #a a a a a#      excluded) hold an apple, chosen uniformly per episode. Walls '#' block; apples do not.
//   # a a a a #      Each frame, after the player moves: an apple under the player is eaten (reward apple_reward,
//   #a a a a a#      last_pickup = frame), then every eaten cell with frame > last_pickup + 20 gets its apple back,
//   # a a a a #      so an apple eaten on frame f is back on frame f + 21, and if it respawns under the player it is
//   #a a + a a#      eaten on the next frame the player is (still or again) on that cell.
//   ###########      Z-order: apples, then the player on top.
//
// The reference draws the 10 cells with numpy's global generator when the phase is built, and fixes the episode's apple
// reward with one more global draw, choice((lo, hi)), which every config makes a constant (1.0). Here the owning env
// draws the cells from its per-episode Rng (draw_apples) and passes the reward in.
#pragma once
#include <array>
#include <cstdint>

#include "envs/memory_rl/pycolab_board.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::memory_rl::pycolab {

class DistractorPhase {
 public:
  static constexpr int kCandidates = 22;    ///< the 'a' cells of the art
  static constexpr int kApples = 10;        ///< num_apples in every config
  static constexpr int kRespawnEvery = 20;  ///< respawn_every: back on frame pickup + 21
  static constexpr Cell kStart{5, 5};

  /// The candidate cells in row-major order; a draw is a bit mask over this list.
  static const std::array<Cell, kCandidates>& candidates();
  /// kApples of the kCandidates cells, uniformly (a partial Fisher-Yates shuffle).
  static uint32_t draw_apples(Rng& rng);
  static int candidate_index(Cell c);
  /// The mask of a golden file's list of [row, col] cells (each must be a candidate; throws rlm::EnvError otherwise).
  static uint32_t mask_from_json(const nlohmann::json& cells) {
    uint32_t mask = 0;
    for (const auto& c : cells) mask |= uint32_t{1} << candidate_index(cell_from_json(c));
    return mask;
  }

  /// Builds the phase (player at the start, the apples of `apple_mask`) and runs its frame-0 pass.
  void start(uint32_t apple_mask, float apple_reward);
  /// One frame: the player's move (blocked by walls on the last render), then the apples. Returns the frame's reward.
  float update(int64_t action, int frame);
  /// The last rendered frame: walls and floor, the apples, the player on top.
  const Board& board() const { return rendered_; }
  Cell player() const { return player_; }
  bool apple_at(int candidate) const { return apple_[static_cast<size_t>(candidate)]; }
  int apples_left() const;

 private:
  Board backdrop_ = make_backdrop();
  Board rendered_;  // the last render, which the player's move is checked against
  Cell player_ = kStart;
  float apple_reward_ = 1.0f;
  std::array<bool, kCandidates> apple_{};
  std::array<int, kCandidates> last_pickup_{};  // frame of the last pickup; −1 never eaten (never respawns)

  static Board make_backdrop();
  void render();
};

}  // namespace rlm::envs::memory_rl::pycolab
