// Gymnasium's LunarLander heuristic (lunar_lander.py heuristic()), the reference controller of the
// statistical tests: it steers towards the pad while hovering lower as it closes in, and only damps the descent once
// a leg touches.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <span>

namespace rlm::envs::test {

/// angle_todo and hover_todo of the heuristic for observation s.
struct LanderTodo {
  double angle, hover;
};

inline LanderTodo lunar_lander_todo(std::span<const float> s) {
  const double angle_targ = std::clamp(s[0] * 0.5 + s[2] * 1.0, -0.4, 0.4);  // more than 0.4 rad is too steep
  const double hover_targ = 0.55 * std::abs(s[0]);
  LanderTodo todo{(angle_targ - s[4]) * 0.5 - s[5] * 1.0, (hover_targ - s[1]) * 0.5 - s[3] * 0.5};
  if (s[6] != 0.0f || s[7] != 0.0f) {  // legs down: only damp the fall
    todo.angle = 0;
    todo.hover = -s[3] * 0.5;
  }
  return todo;
}

/// The Discrete(4) heuristic action; the first matching rule wins.
inline float lunar_lander_heuristic_discrete(std::span<const float> s) {
  const LanderTodo todo = lunar_lander_todo(s);
  if (todo.hover > std::abs(todo.angle) && todo.hover > 0.05) return 2.0f;
  if (todo.angle < -0.05) return 3.0f;
  if (todo.angle > 0.05) return 1.0f;
  return 0.0f;
}

/// The Box(2) heuristic action (main, lateral).
inline std::array<float, 2> lunar_lander_heuristic_continuous(std::span<const float> s) {
  const LanderTodo todo = lunar_lander_todo(s);
  return {static_cast<float>(std::clamp(todo.hover * 20 - 1, -1.0, 1.0)),
          static_cast<float>(std::clamp(-todo.angle * 20, -1.0, 1.0))};
}

}  // namespace rlm::envs::test
