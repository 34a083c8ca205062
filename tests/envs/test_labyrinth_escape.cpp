// LabyrinthEscape oracle tests (popgym@410d5aa tests/test_labyrinth_escape.py plus the env code): spaces and
// lengths per level, the maze generator's invariants, a fixed maze fixture with a hand-written action list in place
// of upstream's seed-dependent "known maze", shortest-path (best) and standing-still (worst) returns, quirk options.
#include <catch2/catch.hpp>
#include <set>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/labyrinth_escape.hpp"
#include "envs/registry.hpp"
#include "labyrinth_test_util.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::LabyrinthEscape;
using rlm::envs::popgym::MazeCell;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
constexpr double kStepCost = 1.0 / 1024;

struct Level {
  std::string id;
  int side;  // grid rows = cols
};
const std::vector<Level> kLevels = {
    {"popgym/LabyrinthEscapeEasy", 11}, {"popgym/LabyrinthEscapeMedium", 15}, {"popgym/LabyrinthEscapeHard", 19}};

std::vector<float> state_of(const Env& env) {
  std::vector<float> s(static_cast<size_t>(env.state_space()->raw_size()));
  env.write_state(s);
  return s;
}

/// Follows a shortest path to the exit.
std::vector<float> shortest_path_action(const LabyrinthEscape& env) {
  return {static_cast<float>(test::first_action_towards(env, [&](int y, int x) { return env.cell(y, x) == 3; }))};
}

}  // namespace

TEST_CASE("LabyrinthEscape spaces and episode length per difficulty", "[labyrinth]") {
  for (const auto& [id, side] : kLevels) {
    INFO(id);
    auto env = make_env(id, kRaw);
    CHECK(env->observation_space() == Space::multi_discrete(std::vector<int64_t>(10, 5)));
    CHECK(env->action_space() == Space::discrete(4));
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(side * side), 5)));
    CHECK(env->max_episode_steps() == 1023);  // truncated at curr_step == L - 1
    const auto& maze = dynamic_cast<const LabyrinthEscape&>(*env);
    // Standing still never escapes: truncated at step 1023 with the minimum return -1023/1024.
    const test::Episode ep = test::run_episode(
        *env, 4, [&](const test::Episode&) { return std::vector<float>{static_cast<float>(test::stay_action(maze))}; },
        2000);
    CHECK(maze.rows() == side);
    CHECK(ep.length() == 1023);
    CHECK(ep.truncated.back() == 1);
    CHECK(ep.terminated.back() == 0);
    CHECK(ep.episode_return() == Approx(-1023.0 / 1024).margin(1e-5));
  }
}

TEST_CASE("LabyrinthEscape mazes are perfect mazes with the exit on the wall opposite the start", "[labyrinth]") {
  std::array<int, 4> sides{};
  for (const auto& [id, side] : kLevels) {
    auto env = make_env(id, kRaw);
    const auto& maze = dynamic_cast<const LabyrinthEscape&>(*env);
    std::vector<float> obs(10);
    for (uint64_t seed = 0; seed < 100; ++seed) {
      INFO(id << " seed " << seed);
      env->reset(seed, obs);
      const auto [sy, sx] = maze.start();
      const auto [ey, ex] = maze.end();
      CHECK(maze.position() == maze.start());
      CHECK(maze.cell(sy, sx) == MazeCell::kStart);
      CHECK(maze.cell(ey, ex) == MazeCell::kGoal);
      const int last = side - 1;
      if (sy == 0) {
        ++sides[0];
        CHECK((ey == last && sx % 2 == 1 && ex % 2 == 1));
      } else if (sy == last) {
        ++sides[1];
        CHECK((ey == 0 && sx % 2 == 1 && ex % 2 == 1));
      } else if (sx == 0) {
        ++sides[2];
        CHECK((ex == last && sy % 2 == 1 && ey % 2 == 1));
      } else {
        ++sides[3];
        CHECK((sx == last && ex == 0 && sy % 2 == 1 && ey % 2 == 1));
      }
      // Hunt-and-kill carves a spanning tree of the (odd, odd) cells: h*w cells joined by h*w - 1 passages, and
      // nothing else is open except the start and exit on the outer wall (mazelib can leave a cell unreached, but
      // with side*side hunts that is far rarer than one in 300 mazes).
      const int cells = (side / 2) * (side / 2);
      int open = 0;
      for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x) {
          const int c = maze.cell(y, x);
          if (c == MazeCell::kFree) ++open;
          if (y % 2 == 0 && x % 2 == 0) CHECK(c == MazeCell::kObstacle);
          if (y % 2 == 1 && x % 2 == 1) CHECK(c == MazeCell::kFree);
        }
      CHECK(open == 2 * cells - 1);
      // A shortest path exists and is at least as long as the wall-to-wall distance.
      int distance = 0;
      CHECK(test::first_action_towards(
                maze, [&](int y, int x) { return maze.cell(y, x) == 3; }, &distance) >= 0);
      CHECK(distance >= side - 1);
    }
  }
  // The start side is uniform over N, S, W, E: 300 mazes, 75 expected per side (sd 7.5).
  for (int n : sides) CHECK((n > 40 && n < 110));
}

TEST_CASE("LabyrinthEscape resets are a pure function of the seed", "[labyrinth]") {
  auto a = make_env("popgym/LabyrinthEscapeMedium", kRaw);
  auto b = make_env("popgym/LabyrinthEscapeMedium", kRaw);
  std::vector<float> oa(10), ob(10);
  a->reset(7, oa);
  a->reset(8, oa);
  b->reset(8, ob);
  CHECK(oa == ob);
  CHECK(state_of(*a) == state_of(*b));
  const auto& ma = dynamic_cast<const LabyrinthEscape&>(*a);
  const auto& mb = dynamic_cast<const LabyrinthEscape&>(*b);
  bool same = true;
  for (int y = 0; y < ma.rows(); ++y)
    for (int x = 0; x < ma.cols(); ++x) same = same && ma.cell(y, x) == mb.cell(y, x);
  CHECK(same);
  b->reset(9, ob);
  bool differs = false;
  for (int y = 0; y < ma.rows(); ++y)
    for (int x = 0; x < ma.cols(); ++x) differs = differs || ma.cell(y, x) != mb.cell(y, x);
  CHECK(differs);
}

// popgym test_step: random steps with resets; every obs and state lies in its space.
TEST_CASE("LabyrinthEscape random steps stay in the spaces", "[labyrinth]") {
  auto env = make_env("popgym/LabyrinthEscapeEasy", kRaw);
  std::vector<float> obs(10);
  env->reset(0, obs);
  REQUIRE(env->observation_space().contains(obs));
  Rng rng(5);
  uint64_t episode = 0;
  for (int i = 0; i < 1000; ++i) {
    const StepResult r = env->step(std::vector<float>{static_cast<float>(rng.uniform_int(4))}, obs);
    REQUIRE(env->observation_space().contains(obs));
    REQUIRE(env->state_space()->contains(state_of(*env)));
    REQUIRE((r.reward == static_cast<float>(-kStepCost) || r.reward == static_cast<float>(1 - kStepCost)));
    if (r.terminated || r.truncated) env->reset(++episode, obs);
  }
}

// popgym test_goal: in (6, 6) mazes, random walks find the exit within the episode.
TEST_CASE("LabyrinthEscape (6, 6) random walks reach the goal", "[labyrinth]") {
  LabyrinthEscape env("popgym/LabyrinthEscapeSmall", {.maze_dims = {6, 6}});
  CHECK(env.rows() == 7);
  for (uint64_t seed = 0; seed < 5; ++seed) {
    const test::Episode ep = test::run_episode(env, seed, test::random_policy(env.action_space(), seed), 2000);
    INFO("seed " << seed);
    CHECK(ep.terminated.back() == 1);
    CHECK(env.steps() < 1023);
    CHECK(env.cell(env.position()[0], env.position()[1]) == MazeCell::kGoal);
    CHECK(ep.rewards.back() == Approx(1 - kStepCost).margin(1e-6));
    CHECK(ep.episode_return() == Approx(1 - ep.length() * kStepCost).margin(1e-5));
  }
}

// Replaces popgym test_known (seed 1, (8, 8), a fixed action list): a fixed maze and a hand-written action list with
// two moves that go nowhere (up at the start is clamped onto the start cell; right at (1, 5) hits a wall).
TEST_CASE("LabyrinthEscape known maze: 24 steps to the exit return 1 - 24/1024", "[labyrinth]") {
  using namespace rlm::envs::test;
  LabyrinthEscape env("popgym/LabyrinthEscapeEasy", {});
  std::vector<float> obs(10);
  env.restore_golden(maze_state(kEscapeFixture, {}), obs);
  // Start on the north wall: upstream's view is shifted down (rows 0 and 1, then a padding row of walls).
  CHECK(obs == std::vector<float>{1, 2, 1, 0, 0, 0, 1, 1, 1, 4});
  std::vector<int> actions = {kUp,    kDown,  kRight, kRight, kRight, kDown, kDown,
                              kRight, kRight, kUp,    kUp,    kRight, kRight};
  actions.insert(actions.end(), 6, kDown);
  actions.insert(actions.end(), 2, kLeft);
  actions.insert(actions.end(), 3, kDown);
  double total = 0;
  StepResult r;
  for (size_t t = 0; t < actions.size(); ++t) {
    INFO("step " << t + 1);
    REQUIRE_FALSE((r.terminated || r.truncated));
    r = env.step(std::vector<float>{static_cast<float>(actions[t])}, obs);
    total += r.reward;
  }
  CHECK(r.terminated);
  CHECK_FALSE(r.truncated);
  CHECK(total == Approx(1.0 - 24 * kStepCost).margin(1e-6));
  // On the exit (bottom wall): the view keeps the centre row and pads below; the last action is 3 (down).
  CHECK(obs == std::vector<float>{1, 0, 0, 1, 3, 1, 1, 1, 1, 3});
  CHECK(env.position() == std::array<int, 2>{10, 7});
  // The state shows exactly the visited cells (none of them a wall: upstream test_noclip), the rest hidden.
  const std::vector<float> state = state_of(env);
  int visible = 0;
  for (float v : state)
    if (v != MazeCell::kHidden) {
      ++visible;
      CHECK(v != MazeCell::kObstacle);
    }
  CHECK(visible == 23);  // 22 distinct cells on the path plus the start
  CHECK_THROWS_WITH(env.step(std::vector<float>{0}, obs), Catch::Contains("after the episode ended"));
}

TEST_CASE("LabyrinthEscape shortest paths reach the best return of each maze", "[labyrinth]") {
  for (const auto& [id, side] : kLevels) {
    auto env = make_env(id, kRaw);
    const auto& maze = dynamic_cast<const LabyrinthEscape&>(*env);
    for (uint64_t seed : {0ull, 1ull, 2ull}) {
      INFO(id << " seed " << seed);
      std::vector<float> obs(10);
      env->reset(seed, obs);
      int distance = 0;
      test::first_action_towards(
          maze, [&](int y, int x) { return maze.cell(y, x) == 3; }, &distance);
      const test::Episode ep = test::run_episode(
          *env, seed, [&](const test::Episode&) { return shortest_path_action(maze); }, 2000);
      CHECK(ep.length() == distance);
      CHECK(ep.terminated.back() == 1);
      CHECK(ep.episode_return() == Approx(1.0 - distance * kStepCost).margin(1e-5));
    }
  }
  // The best of all Easy mazes: a straight corridor from wall to wall, 10 steps (the bound 1 - 1/1024 would need an
  // exit next to the start, which opposite walls never are).
  std::vector<std::string> corridor(11, "###########");
  corridor[0][1] = 'S';
  for (int y = 1; y < 10; ++y) corridor[static_cast<size_t>(y)][1] = '.';
  corridor[10][1] = 'G';
  LabyrinthEscape env("popgym/LabyrinthEscapeEasy", {});
  std::vector<float> obs(10);
  env.restore_golden(test::maze_state(corridor, {}), obs);
  double total = 0;
  StepResult r;
  for (int t = 0; t < 10; ++t) total += (r = env.step(std::vector<float>{test::kDown}, obs)).reward;
  CHECK(r.terminated);
  CHECK(total == Approx(1.0 - 10 * kStepCost).margin(1e-6));
}

TEST_CASE("LabyrinthEscape options fix the shifted view and the L-1 step limit", "[labyrinth]") {
  using namespace rlm::envs::test;
  LabyrinthEscape centred("popgym/LabyrinthEscapeEasy", {.centered_view = true});
  std::vector<float> obs(10);
  centred.restore_golden(maze_state(kEscapeFixture, {}), obs);
  CHECK(obs == std::vector<float>{1, 1, 1, 1, 2, 1, 0, 0, 0, 4});  // the row above the grid reads as walls
  centred.step(std::vector<float>{kDown}, obs);
  CHECK(obs == std::vector<float>{1, 2, 1, 0, 0, 0, 1, 1, 1, 3});  // inside the grid both views agree
  LabyrinthEscape shifted("popgym/LabyrinthEscapeEasy", {});
  std::vector<float> obs2(10);
  shifted.restore_golden(maze_state(kEscapeFixture, {}), obs2);
  shifted.step(std::vector<float>{kDown}, obs2);
  CHECK(obs2 == obs);

  LabyrinthEscape full("popgym/LabyrinthEscapeEasy", {.full_episode_length = true});
  CHECK(full.max_episode_steps() == 1024);
  const test::Episode ep = test::run_episode(
      full, 3, [&](const test::Episode&) { return std::vector<float>{static_cast<float>(stay_action(full))}; }, 2000);
  CHECK(ep.length() == 1024);
  CHECK(ep.truncated.back() == 1);
  CHECK(ep.episode_return() == Approx(-1.0).margin(1e-5));
}

TEST_CASE("LabyrinthEscape rejects invalid actions, misuse and bad configs", "[labyrinth]") {
  auto env = make_env("popgym/LabyrinthEscapeEasy", kRaw);
  std::vector<float> obs(10);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0}, obs), Catch::Contains("before the first reset"));
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{4}, obs),
                    "popgym-LabyrinthEscapeEasy-v0: invalid action 4 for action space Discrete(4)");
  CHECK_THROWS_AS(env->step(std::vector<float>{-1}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{0.5f}, obs), rlm::EnvError);
  CHECK_THROWS_AS(LabyrinthEscape("x/Bad", {.maze_dims = {7, 10}}), rlm::EnvError);
  CHECK_THROWS_AS(LabyrinthEscape("x/Bad", {.maze_dims = {10, 4}}), rlm::EnvError);
  CHECK_THROWS_AS(LabyrinthEscape("x/Bad", {.episode_length = 1}), rlm::EnvError);
  LabyrinthEscape easy("popgym/LabyrinthEscapeEasy", {});
  nlohmann::json wrong = test::maze_state(test::kEscapeFixture, {});
  wrong["grid"].erase(0);
  CHECK_THROWS_AS(easy.restore_golden(wrong, obs), rlm::EnvError);
}
