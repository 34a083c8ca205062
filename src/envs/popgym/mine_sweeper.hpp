// Memory skill: remember which cells were already clicked and what their mine counts said, from counts alone.
// Follows popgym/envs/minesweeper.py (proroklab/popgym@410d5aa, v1.0.7).
//
// Upstream details mirrored: the count includes the clicked cell itself (so clicking a mine shows at least 1); a mine
// click is scored -0.5-1/L and terminates, a re-click -0.5/(L-2), a new clear cell +1/L (L = cells - mines), so viewing
// every clear cell returns exactly 1 and view + L-2 re-clicks + mine returns -1. v1.0.7 truncates at step L unless that
// step terminated. Config::off_by_one_truncation restores the bug of popgym <= 1.0.6 (the copy vendored by SHM):
// truncated = (steps taken before this one == L), so an episode can run L+1 steps and truncated can accompany
// terminated. Stepping after the end continues as upstream does.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct MineSweeperConfig {
  int rows = 4;  ///< upstream "easy" by default: 4 x 4 with 2 mines
  int cols = 4;
  int num_mines = 2;
  bool off_by_one_truncation = false;  ///< true: popgym <= 1.0.6 / SHM truncation (up to L+1 steps), see above
};

/// obs Discrete(min(mines+1, 10)): the number of mines in the 3x3 block centred on the clicked cell (0 at reset).
/// Action MultiDiscrete([rows, cols]) = (row, col).
class MineSweeper final : public Env, public GoldenReplayEnv {
 public:
  /// popgym's hidden grid values.
  static constexpr uint8_t kClear = 0;
  static constexpr uint8_t kMine = 1;
  static constexpr uint8_t kViewed = 2;

  MineSweeper(std::string id, MineSweeperConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return off_by_one_truncation_ ? max_length_ + 1 : max_length_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// popgym's get_state(): the hidden grid, row-major, MultiDiscrete([3]*rows*cols).
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode from the hidden grid popgym recorded right after reset
  /// ({"hidden_grid": row-major 0/1}, see scripts/popgym_golden/mine_sweeper.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  // Hidden state, for tests and debugging.
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  /// L: the number of clear cells, and the episode length limit.
  int max_episode_length() const { return max_length_; }
  uint8_t hidden(int row, int col) const { return hidden_[cell(row, col)]; }
  int neighbor_count(int row, int col) const { return neighbors_[cell(row, col)]; }
  int clear_left() const { return clear_left_; }
  int steps() const { return steps_; }

 private:
  size_t cell(int row, int col) const { return static_cast<size_t>(row * cols_ + col); }
  void start_episode(std::span<float> obs);  // derives the neighbour counts from the mines in hidden_

  std::string id_;
  int rows_;
  int cols_;
  int num_cells_;
  int num_mines_;
  int max_length_;
  bool off_by_one_truncation_;
  Space observation_space_;
  Space action_space_;
  Space state_space_;
  float success_reward_;
  float mine_reward_;
  float reclick_reward_;
  Rng rng_;
  std::vector<uint8_t> hidden_;
  std::vector<uint8_t> neighbors_;
  std::vector<int> scratch_;  // cell indices for sampling mines without replacement
  int clear_left_ = 0;
  int steps_ = 0;
  bool has_state_ = false;  // step() before the first reset() is an error
};

}  // namespace rlm::envs::popgym
