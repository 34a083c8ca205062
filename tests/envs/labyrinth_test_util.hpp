// Shared by the Labyrinth tests: hand-written maze fixtures (they replace upstream's "known maze" tests, which
// depend on CPython's and numpy's global RNG streams) and a breadth-first-search policy using the env's own moves.
#pragma once
#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/popgym/maze_env.hpp"

namespace rlm::envs::test {

inline constexpr int kLeft = popgym::MazeAction::kLeft, kRight = popgym::MazeAction::kRight,
                     kUp = popgym::MazeAction::kUp, kDown = popgym::MazeAction::kDown;

/// An 11x11 (Easy) maze: '#' wall, '.' free, 'S' start, 'G' exit. The shortest escape is 22 steps:
/// D R R D D R R U U R R D D D D D D L L D D D.
inline const std::vector<std::string> kEscapeFixture = {
    "###S#######",  //
    "#.....#...#",  //
    "#.###.#.#.#",  //
    "#...#...#.#",  //
    "###.#####.#",  //
    "#...#.....#",  //
    "#.###.###.#",  //
    "#.....#...#",  //
    "#####.#.###",  //
    "#.....#...#",  //
    "#######G###",  //
};

/// An 11x11 (Easy) serpentine corridor without dead ends: 49 FREE cells, explored in 49 steps without revisits.
inline const std::vector<std::string> kSerpentineFixture = {
    "###########",  //
    "S.........#",  //
    "#########.#",  //
    "#.........#",  //
    "#.#########",  //
    "#.........#",  //
    "#########.#",  //
    "#.........#",  //
    "#.#########",  //
    "#.........#",  //
    "###########",  //
};

/// The serpentine walk from the start: right 9, then down 2 and 8 sideways, alternating, four times.
inline std::vector<int> serpentine_walk() {
  std::vector<int> a(9, kRight);
  for (int leg = 0; leg < 4; ++leg) {
    a.insert(a.end(), 2, kDown);
    a.insert(a.end(), 8, leg % 2 == 0 ? kLeft : kRight);
  }
  return a;
}

/// The hidden-state JSON of restore_golden for a fixture; `end` is the exit cell (a wall in Explore fixtures).
inline nlohmann::json maze_state(const std::vector<std::string>& rows, std::array<int, 2> end) {
  nlohmann::json grid = nlohmann::json::array();
  std::array<int, 2> start{-1, -1};
  for (size_t y = 0; y < rows.size(); ++y) {
    nlohmann::json row = nlohmann::json::array();
    for (size_t x = 0; x < rows[y].size(); ++x) {
      const char c = rows[y][x];
      row.push_back(c == '#' ? 1 : c == 'S' ? 2 : c == 'G' ? 3 : 0);
      if (c == 'S') start = {static_cast<int>(y), static_cast<int>(x)};
      if (c == 'G') end = {static_cast<int>(y), static_cast<int>(x)};
    }
    grid.push_back(row);
  }
  return {{"grid", grid}, {"start", start}, {"end", end}};
}

/// First action of a shortest path (by the env's move rules) to the nearest cell with is_target, or -1 if none is
/// reachable. Also returns that path's length through `distance` when given.
inline int first_action_towards(const popgym::MazeEnv& env, const std::function<bool(int, int)>& is_target,
                                int* distance = nullptr) {
  // The env's target() works from its current position, so neighbours are computed here with the same rules.
  auto step_from = [&](std::array<int, 2> p, int a) {
    std::array<int, 2> q = p;
    if (a == kLeft) --q[1];
    if (a == kRight) ++q[1];
    if (a == kUp) --q[0];
    if (a == kDown) ++q[0];
    q[0] = std::clamp(q[0], 0, env.rows() - 1);
    q[1] = std::clamp(q[1], 0, env.cols() - 1);
    return env.cell(q[0], q[1]) == popgym::MazeCell::kObstacle ? p : q;
  };
  const std::array<int, 2> start = env.position();
  std::map<std::array<int, 2>, std::pair<int, int>> seen;  // cell -> (first action, distance)
  seen[start] = {-1, 0};
  std::deque<std::array<int, 2>> queue{start};
  while (!queue.empty()) {
    const std::array<int, 2> c = queue.front();
    queue.pop_front();
    if (c != start && is_target(c[0], c[1])) {
      if (distance) *distance = seen[c].second;
      return seen[c].first;
    }
    for (int a = 0; a < 4; ++a) {
      const std::array<int, 2> n = step_from(c, a);
      if (seen.count(n)) continue;
      seen[n] = {c == start ? a : seen[c].first, seen[c].second + 1};
      queue.push_back(n);
    }
  }
  return -1;
}

/// An action that leaves the agent in place (the start lies on the outer wall, so one always exists there).
inline int stay_action(const popgym::MazeEnv& env) {
  for (int a = 0; a < 4; ++a)
    if (env.target(a) == env.position()) return a;
  return -1;
}

}  // namespace rlm::envs::test
