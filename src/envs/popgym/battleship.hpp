// Memory skill: remember which cells were already fired at and where the hits cluster, from hit/miss feedback alone.
// Follows popgym/envs/battleship.py (proroklab/popgym@410d5aa, v1.0.7).
//
// Upstream quirks mirrored: the ships cover sum(ship_sizes) = 12 cells by default; a repeat shot on a ship cell is a
// miss; the last of the B*B steps can be terminated and truncated at once (a sinking shot on step B*B); an episode of
// B*B misses returns -B*B/(B*B-12), below -1. Stepping after the end continues as upstream does.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct BattleshipConfig {
  int board_size = 10;                         ///< B: a B x B board; truncated after B*B shots
  std::vector<int> ship_sizes = {2, 3, 3, 4};  ///< placed in this order at reset; ships may touch but never overlap
};

/// obs Discrete(2): 1 = the shot hit an unguessed ship cell, 0 otherwise (and 0 at reset). Action
/// MultiDiscrete([B, B]) = (row, col). A hit pays +1/H (H = ship cells), anything else -1/(B*B-H), so sinking every
/// ship without a miss returns exactly 1 and shooting every cell once returns 0.
class Battleship final : public Env, public GoldenReplayEnv {
 public:
  Battleship(std::string id, BattleshipConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return num_cells_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// popgym's get_state(): Tuple(board MultiDiscrete([2]*B*B), guesses MultiDiscrete([2]*B*B), last obs Discrete(2)),
  /// both grids row-major.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode from the board popgym recorded right after reset
  /// ({"board": B*B row-major 0/1}, see scripts/popgym_golden/battleship.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  // Hidden state, for tests and debugging.
  int board_size() const { return board_size_; }
  bool is_ship(int row, int col) const { return board_[cell(row, col)] != 0; }
  bool guessed(int row, int col) const { return guesses_[cell(row, col)] != 0; }
  int hits() const { return hits_; }
  int needed_hits() const { return needed_hits_; }
  int steps() const { return steps_; }

 private:
  size_t cell(int row, int col) const { return static_cast<size_t>(row * board_size_ + col); }
  /// One rejection-sampling attempt for a ship of `size` cells; true (and the ship drawn on the board) if it fits.
  bool try_place_ship(int size);
  void start_episode(std::span<float> obs);  // clears guesses and counters after the board is set

  std::string id_;
  int board_size_;
  int num_cells_;
  std::vector<int> ship_sizes_;
  int needed_hits_;
  Space observation_space_ = Space::discrete(2);
  Space action_space_;
  Space state_space_;
  float hit_reward_;
  float miss_reward_;
  Rng rng_;
  std::vector<uint8_t> board_;    // 1 = ship cell
  std::vector<uint8_t> guesses_;  // 1 = fired at before
  int hits_ = 0;
  int steps_ = 0;
  int last_obs_ = 0;
  bool has_state_ = false;  // step() before the first reset() is an error
};

}  // namespace rlm::envs::popgym
