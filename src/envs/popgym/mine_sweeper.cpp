// MineSweeper (memory skill: remember clicked cells and their counts); follows popgym/envs/minesweeper.py.
#include "envs/popgym/mine_sweeper.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace rlm::envs::popgym {

MineSweeper::MineSweeper(std::string id, MineSweeperConfig config)
    : id_(std::move(id)),
      rows_(config.rows),
      cols_(config.cols),
      num_cells_(config.rows * config.cols),
      num_mines_(config.num_mines),
      max_length_(config.rows * config.cols - config.num_mines),
      off_by_one_truncation_(config.off_by_one_truncation) {
  if (rows_ < 1 || cols_ < 1)
    throw EnvError(fmt::format("{}: the grid must be at least 1x1, got {}x{}", id_, rows_, cols_));
  // The re-click reward divides by L-2.
  if (num_mines_ < 0 || max_length_ < 3)
    throw EnvError(fmt::format("{}: num_mines must be in [0, {}] for a {}x{} grid, got {}", id_, num_cells_ - 3, rows_,
                               cols_, num_mines_));
  observation_space_ = Space::discrete(std::min(num_mines_ + 1, 10));
  action_space_ = Space::multi_discrete({rows_, cols_});
  state_space_ = Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(num_cells_), 3));
  success_reward_ = static_cast<float>(1.0 / max_length_);
  mine_reward_ = static_cast<float>(-0.5 - 1.0 / max_length_);
  reclick_reward_ = static_cast<float>(-0.5 / (max_length_ - 2));
  hidden_.assign(static_cast<size_t>(num_cells_), kClear);
  neighbors_.assign(static_cast<size_t>(num_cells_), 0);
  scratch_.resize(static_cast<size_t>(num_cells_));
}

void MineSweeper::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  // num_mines distinct cells, uniformly: the first num_mines steps of a Fisher-Yates shuffle.
  std::iota(scratch_.begin(), scratch_.end(), 0);
  std::fill(hidden_.begin(), hidden_.end(), kClear);
  for (int i = 0; i < num_mines_; ++i) {
    const auto j = i + static_cast<int>(rng_.uniform_int(static_cast<uint64_t>(num_cells_ - i)));
    std::swap(scratch_[static_cast<size_t>(i)], scratch_[static_cast<size_t>(j)]);
    hidden_[static_cast<size_t>(scratch_[static_cast<size_t>(i)])] = kMine;
  }
  start_episode(obs);
}

void MineSweeper::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto grid = state.at("hidden_grid").get<std::vector<int>>();
  if (grid.size() != hidden_.size() || std::count(grid.begin(), grid.end(), kMine) != num_mines_ ||
      std::count(grid.begin(), grid.end(), kClear) != max_length_)
    throw EnvError(
        fmt::format("{}: golden hidden_grid must hold {} mines and {} clear cells", id_, num_mines_, max_length_));
  std::copy(grid.begin(), grid.end(), hidden_.begin());
  start_episode(obs);
}

void MineSweeper::start_episode(std::span<float> obs) {
  // Mines in the 3x3 block around each cell, the cell itself included; nothing outside the grid counts.
  for (int r = 0; r < rows_; ++r)
    for (int c = 0; c < cols_; ++c) {
      int n = 0;
      for (int rr = std::max(r - 1, 0); rr <= std::min(r + 1, rows_ - 1); ++rr)
        for (int cc = std::max(c - 1, 0); cc <= std::min(c + 1, cols_ - 1); ++cc) n += hidden_[cell(rr, cc)] == kMine;
      neighbors_[cell(r, c)] = static_cast<uint8_t>(n);
    }
  clear_left_ = max_length_;
  steps_ = 0;
  has_state_ = true;
  obs[0] = 0;
}

StepResult MineSweeper::step(std::span<const float> action, std::span<float> obs) {
  if (!action_space_.contains(action)) [[unlikely]]
    throw_invalid_action(id_, action, action_space_);
  if (!has_state_) [[unlikely]]
    throw_env_misuse(id_, "step() called before the first reset()");
  const size_t c = cell(static_cast<int>(action[0]), static_cast<int>(action[1]));
  StepResult r;
  if (hidden_[c] == kMine) {
    r.terminated = true;
    r.reward = mine_reward_;
  } else if (hidden_[c] == kViewed) {
    r.reward = reclick_reward_;
  } else {
    hidden_[c] = kViewed;
    --clear_left_;
    r.reward = success_reward_;
  }
  if (off_by_one_truncation_) r.truncated = steps_ == max_length_;  // popgym <= 1.0.6: before counting this step
  ++steps_;
  r.terminated = r.terminated || clear_left_ == 0;
  if (!off_by_one_truncation_) r.truncated = steps_ == max_length_ && !r.terminated;
  obs[0] = static_cast<float>(neighbors_[c]);  // also for a mine click
  return r;
}

void MineSweeper::write_state(std::span<float> state) const {
  for (size_t i = 0; i < hidden_.size(); ++i) state[i] = hidden_[i];
}

}  // namespace rlm::envs::popgym
