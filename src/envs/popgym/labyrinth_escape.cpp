// LabyrinthEscape (memory skill: navigation); follows popgym/envs/labyrinth_escape.py.
#include "envs/popgym/labyrinth_escape.hpp"

namespace rlm::envs::popgym {

LabyrinthEscape::LabyrinthEscape(std::string id, LabyrinthEscapeConfig config)
    : MazeEnv(std::move(id), config, /*place_goal=*/true) {}

StepResult LabyrinthEscape::step(std::span<const float> action, std::span<float> obs) {
  const int a = begin_step(action);
  move(a);
  double reward = neg_reward_scale_;  // summed in double, as upstream's Python floats
  StepResult r;
  if (grid_[static_cast<size_t>(pos_)] == MazeCell::kGoal) {
    reward += 1.0;
    r.terminated = true;
  }
  r.truncated = steps_ == step_limit_;  // both flags can be set when the exit is reached on the last step
  r.reward = static_cast<float>(reward);
  active_ = !(r.terminated || r.truncated);
  write_obs(a, obs);
  return r;
}

}  // namespace rlm::envs::popgym
