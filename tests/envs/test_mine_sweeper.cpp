// MineSweeper tests (popgym@410d5aa tests/test_minesweeper.py plus the env code): spaces and lengths per level,
// neighbour counts that include the clicked cell, the return range [-1, 1] reached by the perfect and worst policies,
// v1.0.7's truncation at step L and the SHM off-by-one option, get_state, invalid actions.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/mine_sweeper.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::MineSweeper;
using rlm::envs::popgym::MineSweeperConfig;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};

struct Level {
  std::string id;
  MineSweeperConfig config;
  int64_t obs_n;
  int length;
};
const std::vector<Level> kLevels = {
    {"popgym/MineSweeperEasy", {.rows = 4, .cols = 4, .num_mines = 2}, 3, 14},
    {"popgym/MineSweeperMedium", {.rows = 6, .cols = 6, .num_mines = 6}, 7, 30},
    {"popgym/MineSweeperHard", {.rows = 8, .cols = 8, .num_mines = 10}, 10, 54},
};

using Cell = std::pair<int, int>;

/// Cells holding `kind` in row-major order (numpy's np.where order).
std::vector<Cell> cells(const MineSweeper& env, uint8_t kind) {
  std::vector<Cell> out;
  for (int r = 0; r < env.rows(); ++r)
    for (int c = 0; c < env.cols(); ++c)
      if (env.hidden(r, c) == kind) out.emplace_back(r, c);
  return out;
}

StepResult click(Env& env, Cell cell, std::vector<float>& obs) {
  return env.step(std::vector<float>{static_cast<float>(cell.first), static_cast<float>(cell.second)}, obs);
}

std::vector<float> state_of(const Env& env) {
  std::vector<float> s(static_cast<size_t>(env.state_space()->raw_size()));
  env.write_state(s);
  return s;
}

}  // namespace

TEST_CASE("MineSweeper spaces and episode length per difficulty", "[minesweeper]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    const auto& ms = dynamic_cast<const MineSweeper&>(*env);
    CHECK(env->observation_space() == Space::discrete(level.obs_n));
    CHECK(env->action_space() == Space::multi_discrete({level.config.rows, level.config.cols}));
    CHECK(env->max_episode_steps() == level.length);
    CHECK(ms.max_episode_length() == level.length);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() ==
          Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(level.config.rows * level.config.cols), 3)));
    std::vector<float> obs(1);
    for (uint64_t seed = 0; seed < 50; ++seed) {
      env->reset(seed, obs);
      REQUIRE(obs[0] == 0);
      REQUIRE(cells(ms, MineSweeper::kMine).size() == static_cast<size_t>(level.config.num_mines));
      REQUIRE(ms.clear_left() == level.length);
    }
    for (uint64_t seed : {0ull, 1ull, 2ull}) {
      const test::Episode ep =
          test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), level.length + 5);
      CHECK(ep.length() <= level.length);
      CHECK((ep.terminated.back() || ep.truncated.back()));
    }
  }
}

TEST_CASE("MineSweeper neighbour counts include the clicked cell and stop at the edges", "[minesweeper]") {
  MineSweeper env("popgym/MineSweeperEasy", {});
  // Mines at (0,0) and (1,1):
  //   M . . .      counts  2 2 1 0
  //   . M . .              2 2 1 0
  //   . . . .              1 1 1 0
  //   . . . .              0 0 0 0
  std::vector<int> grid(16, 0);
  grid[0] = grid[5] = 1;
  std::vector<float> obs(1, 9.0f);
  env.restore_golden(nlohmann::json{{"hidden_grid", grid}}, obs);
  CHECK(obs[0] == 0);
  const int want[4][4] = {{2, 2, 1, 0}, {2, 2, 1, 0}, {1, 1, 1, 0}, {0, 0, 0, 0}};
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) CHECK(env.neighbor_count(r, c) == want[r][c]);
  // Clicking a clear cell shows its count; clicking a mine shows the mine's count (>= 1) and terminates.
  StepResult res = click(env, {2, 2}, obs);
  CHECK(obs[0] == 1);
  CHECK_FALSE(res.terminated);
  res = click(env, {0, 0}, obs);
  CHECK(obs[0] == 2);
  CHECK(res.terminated);
  CHECK_FALSE(res.truncated);
  CHECK(res.reward == static_cast<float>(-0.5 - 1.0 / 14));
  CHECK_THROWS_AS(env.restore_golden(nlohmann::json{{"hidden_grid", std::vector<int>(16, 0)}}, obs), rlm::EnvError);
}

TEST_CASE("MineSweeper perfect play returns exactly 1 (test_perfect)", "[minesweeper]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    const auto& ms = dynamic_cast<const MineSweeper&>(*env);
    for (uint64_t seed : {0ull, 5ull, 77ull}) {
      std::vector<float> obs(1);
      env->reset(seed, obs);
      const auto clear = cells(ms, MineSweeper::kClear);
      REQUIRE(clear.size() == static_cast<size_t>(level.length));
      double total = 0;
      for (size_t i = 0; i < clear.size(); ++i) {
        const StepResult r = click(*env, clear[i], obs);
        REQUIRE(r.reward == static_cast<float>(1.0 / level.length));
        REQUIRE(obs[0] == ms.neighbor_count(clear[i].first, clear[i].second));
        REQUIRE(r.terminated == (i + 1 == clear.size()));
        REQUIRE_FALSE(r.truncated);
        total += r.reward;
      }
      CHECK(total == Approx(1.0).margin(1e-5));
    }
  }
}

TEST_CASE("MineSweeper worst play returns exactly -1 (test_worst)", "[minesweeper]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    const auto& ms = dynamic_cast<const MineSweeper&>(*env);
    std::vector<float> obs(1);
    env->reset(3, obs);
    const Cell clear = cells(ms, MineSweeper::kClear).front();
    const Cell mine = cells(ms, MineSweeper::kMine).front();
    double total = 0;
    for (int i = 0; i < level.length - 1; ++i) {
      const StepResult r = click(*env, clear, obs);
      total += r.reward;
      REQUIRE_FALSE((r.terminated || r.truncated));
      REQUIRE(r.reward == static_cast<float>(i == 0 ? 1.0 / level.length : -0.5 / (level.length - 2)));
    }
    const StepResult r = click(*env, mine, obs);
    total += r.reward;
    CHECK(r.terminated);
    CHECK_FALSE(r.truncated);
    CHECK(obs[0] >= 1);
    CHECK(total == Approx(-1.0).margin(1e-5));
  }
}

TEST_CASE("MineSweeper v1.0.7 truncates at step L unless that step terminates", "[minesweeper]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    const auto& ms = dynamic_cast<const MineSweeper&>(*env);
    std::vector<float> obs(1);
    env->reset(4, obs);
    const Cell clear = cells(ms, MineSweeper::kClear).front();
    for (int i = 0; i < level.length; ++i) {
      const StepResult r = click(*env, clear, obs);
      REQUIRE_FALSE(r.terminated);
      REQUIRE(r.truncated == (i + 1 == level.length));
    }
    // A mine on step L: terminated only.
    env->reset(4, obs);
    for (int i = 0; i < level.length - 1; ++i) click(*env, clear, obs);
    const StepResult r = click(*env, cells(ms, MineSweeper::kMine).front(), obs);
    CHECK(r.terminated);
    CHECK_FALSE(r.truncated);
  }
}

TEST_CASE("MineSweeper off_by_one_truncation reproduces popgym <= 1.0.6 (SHM)", "[minesweeper]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    MineSweeperConfig config = level.config;
    config.off_by_one_truncation = true;
    MineSweeper env(level.id, config);
    CHECK(env.max_episode_steps() == level.length + 1);
    std::vector<float> obs(1);
    env.reset(4, obs);
    const Cell clear = cells(env, MineSweeper::kClear).front();
    const Cell mine = cells(env, MineSweeper::kMine).front();
    // Re-clicking runs L+1 steps; only the (L+1)-th is truncated.
    for (int i = 0; i < level.length + 1; ++i) {
      const StepResult r = click(env, clear, obs);
      REQUIRE_FALSE(r.terminated);
      REQUIRE(r.truncated == (i == level.length));
    }
    // A mine on step L+1 is terminated and truncated at once.
    env.reset(4, obs);
    for (int i = 0; i < level.length; ++i) click(env, clear, obs);
    StepResult r = click(env, mine, obs);
    CHECK(r.terminated);
    CHECK(r.truncated);
    // Perfect play is unchanged: terminated on step L, not truncated.
    env.reset(4, obs);
    const auto all_clear = cells(env, MineSweeper::kClear);
    for (const Cell& c : all_clear) r = click(env, c, obs);
    CHECK(r.terminated);
    CHECK_FALSE(r.truncated);
  }
}

TEST_CASE("MineSweeper mines are uniform over the cells", "[minesweeper]") {
  MineSweeper env("popgym/MineSweeperEasy", {});
  std::vector<float> obs(1);
  constexpr int kResets = 16000;
  std::vector<int> count(16, 0);
  for (int seed = 0; seed < kResets; ++seed) {
    env.reset(static_cast<uint64_t>(seed), obs);
    for (const auto& [r, c] : cells(env, MineSweeper::kMine)) ++count[static_cast<size_t>(r * 4 + c)];
  }
  // Each cell is a mine with probability 2/16: mean 2000, sd ~42; 5 sd bounds.
  for (int n : count) CHECK(std::abs(n - 2000) < 210);
}

TEST_CASE("MineSweeper get_state is the hidden grid and stays in the state space", "[minesweeper]") {
  auto env = make_env("popgym/MineSweeperMedium", kRaw);
  const auto& ms = dynamic_cast<const MineSweeper&>(*env);
  std::vector<float> obs(1);
  env->reset(8, obs);
  const Cell clear = cells(ms, MineSweeper::kClear).front();
  click(*env, clear, obs);
  const auto state = state_of(*env);
  REQUIRE(env->state_space()->contains(state));
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) CHECK(state[static_cast<size_t>(r * 6 + c)] == ms.hidden(r, c));
  CHECK(state[static_cast<size_t>(clear.first * 6 + clear.second)] == MineSweeper::kViewed);
  for (uint64_t seed = 0; seed < 5; ++seed) {
    env->reset(seed, obs);
    const auto policy = test::random_policy(env->action_space(), seed);
    for (int t = 0; t < 30; ++t) {
      const StepResult r = env->step(policy({}), obs);
      REQUIRE(env->observation_space().contains(obs));
      REQUIRE(env->state_space()->contains(state_of(*env)));
      if (r.terminated || r.truncated) break;
    }
  }
}

TEST_CASE("MineSweeper rejects invalid actions, stepping before reset and bad configs", "[minesweeper]") {
  auto env = make_env("popgym/MineSweeperEasy", kRaw);
  std::vector<float> obs(1);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0, 0}, obs), Catch::Contains("before the first reset"));
  env->reset(0, obs);
  try {
    env->step(std::vector<float>{0, 4}, obs);
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()) ==
          "popgym-MineSweeperEasy-v0: invalid action [0, 4] for action space MultiDiscrete([4, 4])");
  }
  CHECK_THROWS_AS(env->step(std::vector<float>{-1, 0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{1}, obs), rlm::EnvError);
  CHECK(dynamic_cast<const MineSweeper&>(*env).steps() == 0);
  CHECK_THROWS_AS(MineSweeper("x/Bad", {.rows = 2, .cols = 2, .num_mines = 2}), rlm::EnvError);
  CHECK_THROWS_AS(MineSweeper("x/Bad", {.rows = 0, .cols = 4, .num_mines = 0}), rlm::EnvError);
}

TEST_CASE("MineSweeper state in its space at every step and replayed from the seed (test_spaces, test_np_random)",
          "[minesweeper]") {
  for (const char* id : {"popgym/MineSweeperEasy", "popgym/MineSweeperMedium", "popgym/MineSweeperHard"}) {
    INFO(id);
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 1ull, 2ull}) CHECK(test::check_states_random_episode(*env, seed) > 0);
  }
}
