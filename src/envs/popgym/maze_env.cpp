// Labyrinth core (popgym/core/maze.py) and mazelib's HuntAndKill generator.
#include "envs/popgym/maze_env.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace rlm::envs::popgym {
namespace {

/// An odd coordinate in [1, n): mazelib's randrange(1, n, 2) for odd n.
int odd_coordinate(int n, Rng& rng) { return 1 + 2 * static_cast<int>(rng.uniform_int(static_cast<uint64_t>(n / 2))); }

/// mazelib's HuntAndKill._walk: from a carved cell, repeatedly carve into a random wall cell two steps away (and the
/// wall between) until none is left. mazelib lists the candidates N, S, W, E, shuffles them with numpy and then
/// picks one with random.choice: a uniform choice among them, which is what one draw here gives.
void walk(int rows, int cols, int row, int col, Rng& rng, std::span<int8_t> grid) {
  auto at = [&](int r, int c) -> int8_t& { return grid[static_cast<size_t>(r * cols + c)]; };
  if (at(row, col) != 0) return;  // hunting landed on an uncarved cell: no walk
  std::array<std::array<int, 2>, 4> candidates;
  while (true) {
    int n = 0;
    if (row > 1 && at(row - 2, col) == 1) candidates[n++] = {row - 2, col};
    if (row < rows - 2 && at(row + 2, col) == 1) candidates[n++] = {row + 2, col};
    if (col > 1 && at(row, col - 2) == 1) candidates[n++] = {row, col - 2};
    if (col < cols - 2 && at(row, col + 2) == 1) candidates[n++] = {row, col + 2};
    if (n == 0) return;
    const auto [r, c] = candidates[rng.uniform_int(static_cast<uint64_t>(n))];
    at(r, c) = 0;
    at((r + row) / 2, (c + col) / 2) = 0;
    row = r;
    col = c;
  }
}

}  // namespace

std::array<int, 2> HuntAndKill::generate(int rows, int cols, Rng& rng, std::span<int8_t> grid) {
  std::fill(grid.begin(), grid.end(), int8_t{1});
  int row = odd_coordinate(rows, rng);
  int col = odd_coordinate(cols, rng);
  grid[static_cast<size_t>(row * cols + col)] = 0;
  // mazelib walks from the first cell, then hunts rows*cols times (random odd cells; walking only from carved ones).
  // Cells no walk ever reaches stay walls, as upstream (rare).
  walk(rows, cols, row, col, rng, grid);
  for (int trial = 0; trial < rows * cols; ++trial) {
    row = odd_coordinate(rows, rng);
    col = odd_coordinate(cols, rng);
    walk(rows, cols, row, col, rng, grid);
  }
  // Maze._generate_outer_entrances: a random side for the start, the end on the opposite side. mazelib redraws when
  // the two are adjacent, which opposite sides of a >= 7x7 grid never are.
  int start_y = 0, start_x = 0, end_y = 0, end_x = 0;
  switch (rng.uniform_int(4)) {
    case 0:  // north
      start_x = odd_coordinate(cols, rng);
      end_y = rows - 1;
      end_x = odd_coordinate(cols, rng);
      break;
    case 1:  // south
      start_y = rows - 1;
      start_x = odd_coordinate(cols, rng);
      end_x = odd_coordinate(cols, rng);
      break;
    case 2:  // west
      start_y = odd_coordinate(rows, rng);
      end_y = odd_coordinate(rows, rng);
      end_x = cols - 1;
      break;
    default:  // east
      start_y = odd_coordinate(rows, rng);
      start_x = cols - 1;
      end_y = odd_coordinate(rows, rng);
      break;
  }
  return {start_y * cols + start_x, end_y * cols + end_x};
}

MazeEnv::MazeEnv(std::string id, const MazeConfig& config, bool place_goal)
    : id_(std::move(id)),
      rows_(config.maze_dims[0] + 1),
      cols_(config.maze_dims[1] + 1),
      step_limit_(config.full_episode_length ? config.episode_length : config.episode_length - 1),
      neg_reward_scale_(-1.0 / config.episode_length),
      centered_view_(config.centered_view),
      place_goal_(place_goal),
      observation_space_(Space::multi_discrete(std::vector<int64_t>(10, 5))),
      state_space_(Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(std::max(rows_ * cols_, 1)), 5))),
      grid_(static_cast<size_t>(std::max(rows_ * cols_, 1)), int8_t{1}),
      explored_(grid_.size(), 0) {
  for (int d : config.maze_dims)
    if (d < 6 || d % 2 != 0)  // mazelib needs >= 3 open cells per side; popgym asserts even dims
      throw EnvError(fmt::format("{}: maze_dims must be even and >= 6, got ({}, {})", id_, config.maze_dims[0],
                                 config.maze_dims[1]));
  if (config.episode_length < 2)
    throw EnvError(fmt::format("{}: episode_length must be >= 2, got {}", id_, config.episode_length));
}

void MazeEnv::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  const auto [start, end] = HuntAndKill::generate(rows_, cols_, rng_, grid_);
  start_ = start;
  end_ = end;
  start_episode(obs);
}

void MazeEnv::start_episode(std::span<float> obs) {
  grid_[static_cast<size_t>(start_)] = MazeCell::kStart;
  if (place_goal_) grid_[static_cast<size_t>(end_)] = MazeCell::kGoal;
  std::fill(explored_.begin(), explored_.end(), uint8_t{0});
  explored_[static_cast<size_t>(start_)] = 1;
  pos_ = start_;
  steps_ = 0;
  active_ = true;
  on_episode_start();
  write_obs(MazeAction::kNone, obs);
}

void MazeEnv::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto& grid = state.at("grid");
  if (grid.size() != static_cast<size_t>(rows_))
    throw EnvError(fmt::format("{}: golden grid has {} rows, expected {}", id_, grid.size(), rows_));
  for (int y = 0; y < rows_; ++y) {
    const auto& row = grid[static_cast<size_t>(y)];
    if (row.size() != static_cast<size_t>(cols_))
      throw EnvError(fmt::format("{}: golden grid row {} has {} cells, expected {}", id_, y, row.size(), cols_));
    for (int x = 0; x < cols_; ++x) grid_[index(y, x)] = static_cast<int8_t>(row[static_cast<size_t>(x)].get<int>());
  }
  const auto s = state.at("start").get<std::array<int, 2>>();
  const auto e = state.at("end").get<std::array<int, 2>>();
  start_ = s[0] * cols_ + s[1];
  end_ = e[0] * cols_ + e[1];
  start_episode(obs);
}

void MazeEnv::write_state(std::span<float> state) const {
  for (size_t i = 0; i < grid_.size(); ++i)
    state[i] = explored_[i] ? static_cast<float>(grid_[i]) : static_cast<float>(MazeCell::kHidden);
}

std::array<int, 2> MazeEnv::target(int action) const {
  const int t = target_index(action);
  return {t / cols_, t % cols_};
}

int MazeEnv::target_index(int action) const {
  int y = pos_ / cols_, x = pos_ % cols_;
  switch (action) {
    case MazeAction::kLeft:
      --x;
      break;
    case MazeAction::kRight:
      ++x;
      break;
    case MazeAction::kUp:
      --y;
      break;
    default:
      ++y;
      break;
  }
  y = std::clamp(y, 0, rows_ - 1);
  x = std::clamp(x, 0, cols_ - 1);
  const int t = y * cols_ + x;
  return grid_[static_cast<size_t>(t)] == MazeCell::kObstacle ? pos_ : t;
}

int MazeEnv::begin_step(std::span<const float> action) {
  const auto a = static_cast<int>(discrete_action(action, action_space_, id_));
  if (!active_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  return a;
}

void MazeEnv::move(int action) {
  pos_ = target_index(action);
  explored_[static_cast<size_t>(pos_)] = 1;
  ++steps_;
}

void MazeEnv::write_obs(int last_action, std::span<float> obs) const {
  const int y = pos_ / cols_, x = pos_ % cols_;
  if (centered_view_) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const int gy = y - 1 + r, gx = x - 1 + c;
        const bool inside = gy >= 0 && gy < rows_ && gx >= 0 && gx < cols_;
        obs[static_cast<size_t>(3 * r + c)] = inside ? grid_[index(gy, gx)] : MazeCell::kObstacle;
      }
  } else {
    // Upstream's slice grid[y0 : y1 + 1, x0 : x1 + 1] with y1 clipped by the width and x1 by the height (it mixes
    // up the axes; equal on square grids), numpy's clipping of slice ends, then padding with walls at the bottom
    // and right only.
    const int y0 = std::max(y - 1, 0), x0 = std::max(x - 1, 0);
    const int y_stop = std::min(std::min(y + 1, cols_) + 1, rows_);
    const int x_stop = std::min(std::min(x + 1, rows_) + 1, cols_);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const int gy = y0 + r, gx = x0 + c;
        obs[static_cast<size_t>(3 * r + c)] = gy < y_stop && gx < x_stop ? grid_[index(gy, gx)] : MazeCell::kObstacle;
      }
  }
  obs[9] = static_cast<float>(last_action);
}

}  // namespace rlm::envs::popgym
