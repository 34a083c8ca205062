// Memory skill: navigation (remember which parts of a maze seen 3x3 at a time are explored). Follows
// popgym/envs/labyrinth_explore.py on popgym/core/maze.py (proroklab/popgym@410d5aa, v1.0.7); deprecated upstream:
// "Maze environments have been shown to be solvable without the use of memory".
#pragma once
#include <span>
#include <string>

#include "envs/popgym/maze_env.hpp"

namespace rlm::envs::popgym {

/// maze_dims (10,10)/(14,14)/(18,18) for Easy/Medium/Hard, L = 1024; see MazeConfig for the quirk fixes.
using LabyrinthExploreConfig = MazeConfig;

/// A random maze (the exit cell stays a wall, as upstream). A step onto an unexplored cell pays +1/F, F = number of
/// FREE cells at reset (the start cell not counted), any other step -1/L (blocked moves included); terminated once
/// every open cell is explored. Return 1 - (revisiting steps)/L when all is explored, at least -(L-1)/L.
/// Steps are deterministic (upstream draws nothing in step()).
class LabyrinthExplore final : public MazeEnv {
 public:
  LabyrinthExplore(std::string id, LabyrinthExploreConfig config);
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// Open cells not yet explored.
  int unexplored() const { return unexplored_; }

 private:
  void on_episode_start() override;

  double pos_reward_scale_ = 0;  // 1/F, a Python float upstream
  int unexplored_ = 0;
};

}  // namespace rlm::envs::popgym
