// Shared core of the Labyrinth envs, following popgym/core/maze.py (MazeEnv) and the maze generator it uses,
// mazelib 0.9.16's HuntAndKill with hunt_order="random" plus Maze.generate_entrances(start_outer=True)
// (proroklab/popgym@410d5aa, v1.0.7). Upstream draws from Python's global `random` and numpy's global RNG; here
// the env's own Rng drives the same algorithm, so mazes follow the same distribution but not the same numbers.
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

/// Difficulty parameters shared by LabyrinthEscape and LabyrinthExplore, plus the options that fix upstream quirks.
struct MazeConfig {
  /// (height, width) of the grid minus one, as upstream's maze_dims: even and >= 6; the grid is (h+1) x (w+1) with
  /// h/2 x w/2 open cells at the (odd, odd) positions.
  std::array<int, 2> maze_dims = {10, 10};
  /// L: every step costs -1/L.
  int episode_length = 1024;
  /// Upstream quirk: the 3x3 view is clipped at the top/left edges and padded at the bottom/right only, so on the top
  /// row or left column it is shifted instead of centred. true centres it (out-of-grid = wall).
  bool centered_view = false;
  /// Upstream quirk: truncated is set at step L-1, so at most L-1 steps are taken and the minimum return is
  /// -(L-1)/L. true truncates at step L instead.
  bool full_episode_length = false;
};

/// Grid cell values (popgym's Cell); kHidden only appears in the state. Plain ints, as they are compared with the
/// float obs and state.
struct MazeCell {
  static constexpr int kFree = 0, kObstacle = 1, kStart = 2, kGoal = 3, kHidden = 4;
};

/// Actions (popgym's Actions); kNone is the "last action" in the reset obs.
struct MazeAction {
  static constexpr int kLeft = 0, kRight = 1, kUp = 2, kDown = 3, kNone = 4;
};

/// mazelib's HuntAndKill(random hunt order) into `grid` (row-major, rows x cols, both odd and >= 7), then the outer
/// entrances: returns {start, end} as flat indices on opposite outer walls. Does not allocate.
struct HuntAndKill {
  static std::array<int, 2> generate(int rows, int cols, Rng& rng, std::span<int8_t> grid);
};

/// Grid, agent, exploration mask and observation of popgym's MazeEnv; the two Labyrinths add their rewards.
/// obs = MultiDiscrete([5]*9 + [5]): the 3x3 local view row-major, then the last action (kNone at reset).
/// state = MultiDiscrete([5]*rows*cols): the grid row-major with unexplored cells shown as kHidden.
class MazeEnv : public Env, public GoldenReplayEnv {
 public:
  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  /// L-1 (upstream's truncation at curr_step == L-1), or L with full_episode_length.
  int64_t max_episode_steps() const override { return step_limit_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays and fixtures: start the episode from the maze popgym recorded right after
  /// reset ({"grid": rows x cols ints with START (and GOAL) written, "start": [y, x], "end": [y, x]}, see
  /// scripts/popgym_golden/labyrinth_escape.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int cell(int y, int x) const { return grid_[index(y, x)]; }
  bool explored(int y, int x) const { return explored_[index(y, x)] != 0; }
  /// Agent position as (y, x).
  std::array<int, 2> position() const { return {pos_ / cols_, pos_ % cols_}; }
  std::array<int, 2> start() const { return {start_ / cols_, start_ % cols_}; }
  std::array<int, 2> end() const { return {end_ / cols_, end_ % cols_}; }
  int steps() const { return steps_; }
  /// Where `action` would take the agent: the neighbour clamped into the grid, or the current cell if that is a wall.
  std::array<int, 2> target(int action) const;

 protected:
  /// `place_goal`: LabyrinthEscape writes GOAL into the exit cell; in LabyrinthExplore the exit stays a wall.
  MazeEnv(std::string id, const MazeConfig& config, bool place_goal);

  /// Validates the action and that an episode is running; returns it as an int.
  int begin_step(std::span<const float> action);
  /// popgym's MazeEnv.step: moves to target_index(action), marks it explored, counts the step.
  void move(int action);
  /// Flat index of target(action).
  int target_index(int action) const;
  void write_obs(int last_action, std::span<float> obs) const;
  /// Called once the maze, start and explored mask are in place (reset and restore_golden).
  virtual void on_episode_start() {}

  size_t index(int y, int x) const { return static_cast<size_t>(y * cols_ + x); }

  std::string id_;
  int rows_, cols_;
  int step_limit_;
  double neg_reward_scale_;  // -1/L, in double as upstream's Python float
  bool centered_view_;
  bool place_goal_;
  Space observation_space_;
  Space action_space_ = Space::discrete(4);
  Space state_space_;
  Rng rng_;
  std::vector<int8_t> grid_;
  std::vector<uint8_t> explored_;
  int start_ = 0, end_ = 0, pos_ = 0;
  int steps_ = 0;
  bool active_ = false;  // an episode is running (reset done, not yet terminated or truncated)

 private:
  void start_episode(std::span<float> obs);
};

}  // namespace rlm::envs::popgym
