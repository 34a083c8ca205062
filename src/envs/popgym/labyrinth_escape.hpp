// Memory skill: navigation (remember where you have been to find the exit of a maze you see 3x3 at a time). Follows
// popgym/envs/labyrinth_escape.py on popgym/core/maze.py (proroklab/popgym@410d5aa, v1.0.7); deprecated upstream:
// "Maze environments have been shown to be solvable without the use of memory".
#pragma once
#include <span>
#include <string>

#include "envs/popgym/maze_env.hpp"

namespace rlm::envs::popgym {

/// maze_dims (10,10)/(14,14)/(18,18) for Easy/Medium/Hard, L = 1024; see MazeConfig for the quirk fixes.
using LabyrinthEscapeConfig = MazeConfig;

/// A random maze with the start on one outer wall and the exit (GOAL) on the opposite one. Every step pays -1/L;
/// stepping onto the exit adds +1 and terminates. Return 1 - k/L on escaping at step k, -(L-1)/L on timeout.
/// Steps are deterministic (upstream draws nothing in step()).
class LabyrinthEscape final : public MazeEnv {
 public:
  LabyrinthEscape(std::string id, LabyrinthEscapeConfig config);
  StepResult step(std::span<const float> action, std::span<float> obs) override;
};

}  // namespace rlm::envs::popgym
