// LabyrinthExplore (memory skill: navigation); follows popgym/envs/labyrinth_explore.py.
#include "envs/popgym/labyrinth_explore.hpp"

#include <algorithm>

namespace rlm::envs::popgym {

LabyrinthExplore::LabyrinthExplore(std::string id, LabyrinthExploreConfig config)
    : MazeEnv(std::move(id), config, /*place_goal=*/false) {}

void LabyrinthExplore::on_episode_start() {
  const auto free_cells = std::count(grid_.begin(), grid_.end(), int8_t{MazeCell::kFree});
  // Upstream divides by zero here (a NumPy inf) only for a maze without free cells, which generation never makes.
  pos_reward_scale_ = 1.0 / static_cast<double>(free_cells);
  // Every open cell but the explored start; upstream's termination test compares the open and explored masks.
  unexplored_ = static_cast<int>(
      std::count_if(grid_.begin(), grid_.end(), [](int8_t c) { return c != MazeCell::kObstacle; }) - 1);
}

StepResult LabyrinthExplore::step(std::span<const float> action, std::span<float> obs) {
  const int a = begin_step(action);
  // Decided before moving; a blocked move targets the (explored) current cell.
  const bool new_square = explored_[static_cast<size_t>(target_index(a))] == 0;
  move(a);
  StepResult r;
  r.reward = static_cast<float>(new_square ? pos_reward_scale_ : neg_reward_scale_);
  if (new_square) --unexplored_;
  r.truncated = steps_ == step_limit_;
  r.terminated = unexplored_ == 0;
  active_ = !(r.terminated || r.truncated);
  write_obs(a, obs);
  return r;
}

}  // namespace rlm::envs::popgym
