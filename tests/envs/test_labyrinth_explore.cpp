// LabyrinthExplore oracle tests (popgym@410d5aa tests/test_labyrinth_explore.py plus the env code): spaces and
// lengths per level, integer obs, no wall ever explored, a fixed maze fixture with a hand-written action list in place
// of upstream's seed-dependent "known maze", the best return 1 (a maze without dead ends) and the worst -1023/1024.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/labyrinth_explore.hpp"
#include "envs/registry.hpp"
#include "labyrinth_test_util.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::LabyrinthExplore;
using rlm::envs::popgym::MazeCell;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
constexpr double kStepCost = 1.0 / 1024;

struct Level {
  std::string id;
  int side;
};
const std::vector<Level> kLevels = {
    {"popgym/LabyrinthExploreEasy", 11}, {"popgym/LabyrinthExploreMedium", 15}, {"popgym/LabyrinthExploreHard", 19}};

std::vector<float> state_of(const Env& env) {
  std::vector<float> s(static_cast<size_t>(env.state_space()->raw_size()));
  env.write_state(s);
  return s;
}

int count_free(const LabyrinthExplore& env) {
  int n = 0;
  for (int y = 0; y < env.rows(); ++y)
    for (int x = 0; x < env.cols(); ++x) n += env.cell(y, x) == MazeCell::kFree;
  return n;
}

}  // namespace

TEST_CASE("LabyrinthExplore spaces and episode length per difficulty", "[labyrinth]") {
  for (const auto& [id, side] : kLevels) {
    INFO(id);
    auto env = make_env(id, kRaw);
    CHECK(env->observation_space() == Space::multi_discrete(std::vector<int64_t>(10, 5)));
    CHECK(env->action_space() == Space::discrete(4));
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(side * side), 5)));
    CHECK(env->max_episode_steps() == 1023);
    const auto& maze = dynamic_cast<const LabyrinthExplore&>(*env);
    // Standing still: every step revisits the start, -1/1024 each, truncated at 1023 (the minimum return).
    const test::Episode ep = test::run_episode(
        *env, 4, [&](const test::Episode&) { return std::vector<float>{static_cast<float>(test::stay_action(maze))}; },
        2000);
    CHECK(ep.length() == 1023);
    CHECK(ep.truncated.back() == 1);
    CHECK(ep.terminated.back() == 0);
    CHECK(ep.episode_return() == Approx(-1023.0 / 1024).margin(1e-5));
    // The exit stays a wall in Explore; FREE cells are the h*w cells and h*w - 1 passages (the start not counted).
    const auto [ey, ex] = maze.end();
    CHECK(maze.cell(ey, ex) == MazeCell::kObstacle);
    CHECK(count_free(maze) == 2 * (side / 2) * (side / 2) - 1);
    CHECK(maze.unexplored() == count_free(maze));
  }
}

// popgym test_step (obs dtype int32) and test_noclip (no obstacle is ever marked explored), over random episodes.
TEST_CASE("LabyrinthExplore random episodes: integer obs in the space, walls never explored", "[labyrinth]") {
  auto env = make_env("popgym/LabyrinthExploreEasy", kRaw);
  const auto& maze = dynamic_cast<const LabyrinthExplore&>(*env);
  for (uint64_t seed = 0; seed < 5; ++seed) {
    const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed + 9), 2000);
    INFO("seed " << seed);
    REQUIRE((ep.terminated.back() || ep.truncated.back()));
    for (const auto& o : ep.obs) {
      REQUIRE(env->observation_space().contains(o));  // integers in [0, 5): upstream's int32 obs
      for (int i = 0; i < 9; ++i) REQUIRE(o[static_cast<size_t>(i)] != MazeCell::kHidden);
    }
    const std::vector<float> state = state_of(*env);
    REQUIRE(env->state_space()->contains(state));
    for (int y = 0; y < maze.rows(); ++y)
      for (int x = 0; x < maze.cols(); ++x) {
        const float s = state[static_cast<size_t>(y * maze.cols() + x)];
        CHECK(s != MazeCell::kObstacle);
        CHECK((s == MazeCell::kHidden) == !maze.explored(y, x));
      }
    // Rewards: +1/F on a new cell, -1/1024 otherwise, never both.
    const double pos = 1.0 / count_free(maze);
    int new_cells = 0;
    for (float r : ep.rewards) {
      REQUIRE((r == static_cast<float>(pos) || r == static_cast<float>(-kStepCost)));
      new_cells += r > 0;
    }
    CHECK(new_cells == count_free(maze) - maze.unexplored());
  }
}

// Replaces popgym test_known (seed 0, (6, 6), 25 actions, return 1 - 8/1024): a fixed serpentine maze walked with
// eight steps that find nothing new (a clamped move at the start, a wall bump, three steps back and three forth).
TEST_CASE("LabyrinthExplore known maze: 8 wasted steps return 1 - 8/1024", "[labyrinth]") {
  using namespace rlm::envs::test;
  LabyrinthExplore env("popgym/LabyrinthExploreEasy", {});
  std::vector<float> obs(10);
  env.restore_golden(maze_state(kSerpentineFixture, {9, 10}), obs);
  // Start on the west wall: upstream's view is shifted right (columns 0 and 1, then a padding column of walls).
  CHECK(obs == std::vector<float>{1, 1, 1, 2, 0, 1, 1, 1, 1, 4});
  CHECK(env.unexplored() == 49);
  std::vector<int> actions = {kLeft};
  actions.insert(actions.end(), 9, kRight);
  actions.push_back(kUp);
  actions.insert(actions.end(), 3, kLeft);
  actions.insert(actions.end(), 3, kRight);
  const std::vector<int> rest = serpentine_walk();
  actions.insert(actions.end(), rest.begin() + 9, rest.end());
  REQUIRE(actions.size() == 57);
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
  CHECK(total == Approx(1.0 - 8 * kStepCost).margin(1e-6));
}

TEST_CASE("LabyrinthExplore best return: exactly 1 without dead ends, 1 - revisits/1024 otherwise", "[labyrinth]") {
  using namespace rlm::envs::test;
  LabyrinthExplore env("popgym/LabyrinthExploreEasy", {});
  std::vector<float> obs(10);
  env.restore_golden(maze_state(kSerpentineFixture, {9, 10}), obs);
  const std::vector<int> walk = serpentine_walk();
  double total = 0;
  StepResult r;
  for (int a : walk) {
    r = env.step(std::vector<float>{static_cast<float>(a)}, obs);
    CHECK(r.reward == Approx(1.0 / 49).margin(1e-7));
    total += r.reward;
  }
  CHECK(r.terminated);
  CHECK(total == Approx(1.0).margin(1e-5));

  // Generated mazes have dead ends: walking to the nearest unexplored cell explores everything, and every step
  // beyond the F new ones costs 1/1024.
  for (const auto& [id, side] : kLevels) {
    auto e = make_env(id, kRaw);
    const auto& maze = dynamic_cast<const LabyrinthExplore&>(*e);
    for (uint64_t seed : {0ull, 1ull}) {
      INFO(id << " seed " << seed);
      std::vector<float> o(10);
      e->reset(seed, o);
      const int free_cells = count_free(maze);
      const test::Episode ep = test::run_episode(
          *e, seed,
          [&](const test::Episode&) {
            return std::vector<float>{
                static_cast<float>(first_action_towards(maze, [&](int y, int x) { return !maze.explored(y, x); }))};
          },
          2000);
      CHECK(ep.terminated.back() == 1);
      CHECK(maze.unexplored() == 0);
      CHECK(ep.episode_return() == Approx(1.0 - (ep.length() - free_cells) * kStepCost).margin(1e-5));
    }
  }
}

TEST_CASE("LabyrinthExplore options and errors", "[labyrinth]") {
  using namespace rlm::envs::test;
  LabyrinthExplore centred("popgym/LabyrinthExploreEasy", {.centered_view = true});
  std::vector<float> obs(10);
  centred.restore_golden(maze_state(kSerpentineFixture, {9, 10}), obs);
  CHECK(obs == std::vector<float>{1, 1, 1, 1, 2, 0, 1, 1, 1, 4});  // the column left of the grid reads as walls

  auto env = make_env("popgym/LabyrinthExploreHard", kRaw);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0}, obs), Catch::Contains("before the first reset"));
  env->reset(1, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{7}, obs),
                    "popgym-LabyrinthExploreHard-v0: invalid action 7 for action space Discrete(4)");
  CHECK_THROWS_AS(LabyrinthExplore("x/Bad", {.maze_dims = {4, 4}}), rlm::EnvError);
}
