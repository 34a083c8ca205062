// Battleship tests (popgym@410d5aa tests/test_battleship.py plus the env code): spaces and lengths per level,
// 12 ship cells, hit/miss/repeat rewards, the return range [-B*B/(B*B-12), 1] reached by scripted policies, the last
// step that both terminates and truncates, get_state, invalid actions.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/battleship.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::Battleship;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
const std::vector<std::pair<std::string, int>> kLevels = {
    {"popgym/BattleshipEasy", 8}, {"popgym/BattleshipMedium", 10}, {"popgym/BattleshipHard", 12}};

using Cell = std::pair<int, int>;

/// Ship cells (or water cells) in row-major order, as numpy's np.where lists them.
std::vector<Cell> cells(const Battleship& env, bool ship) {
  std::vector<Cell> out;
  for (int r = 0; r < env.board_size(); ++r)
    for (int c = 0; c < env.board_size(); ++c)
      if (env.is_ship(r, c) == ship) out.emplace_back(r, c);
  return out;
}

StepResult fire(Env& env, Cell cell, std::vector<float>& obs) {
  return env.step(std::vector<float>{static_cast<float>(cell.first), static_cast<float>(cell.second)}, obs);
}

std::vector<float> state_of(const Env& env) {
  std::vector<float> s(static_cast<size_t>(env.state_space()->raw_size()));
  env.write_state(s);
  return s;
}

}  // namespace

TEST_CASE("Battleship spaces and episode length per difficulty", "[battleship]") {
  for (const auto& [id, b] : kLevels) {
    INFO(id);
    auto env = make_env(id, kRaw);
    CHECK(env->observation_space() == Space::discrete(2));
    CHECK(env->action_space() == Space::multi_discrete({b, b}));
    CHECK(env->max_episode_steps() == b * b);
    const std::vector<int64_t> grid(static_cast<size_t>(b * b), 2);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() ==
          Space::tuple({Space::multi_discrete(grid), Space::multi_discrete(grid), Space::discrete(2)}));
    // The POPGym paper pipeline's flat obs: 2 + 2B (previous action) + 2 (is_t0).
    CHECK(make_env(id, {.previous_action = true, .antialias = true, .flatten = true})->observation_space().raw_size() ==
          4 + 2 * b);
    // A random shooter almost never sinks all 12 cells early, so it runs to truncation at B*B.
    for (uint64_t seed : {0ull, 1ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), b * b + 5);
      CHECK(ep.length() <= b * b);
      CHECK((ep.terminated.back() || ep.truncated.back()));
      if (!ep.terminated.back()) CHECK(ep.length() == b * b);
    }
  }
}

TEST_CASE("Battleship places 12 ship cells without overlap (test_num_ships) and uses the whole board", "[battleship]") {
  for (const auto& [id, b] : kLevels) {
    Battleship env(id, {.board_size = b});
    std::vector<float> obs(1);
    std::vector<int> occupied(static_cast<size_t>(b * b), 0);
    for (uint64_t seed = 0; seed < 500; ++seed) {
      env.reset(seed, obs);
      REQUIRE(obs[0] == 0);
      REQUIRE(env.needed_hits() == 12);
      REQUIRE(cells(env, true).size() == 12);
      for (const auto& [r, c] : cells(env, true)) ++occupied[static_cast<size_t>(r * b + c)];
    }
    // Every cell, corners included, holds a ship in some episodes.
    for (int n : occupied) CHECK(n > 0);
  }
}

TEST_CASE("Battleship placement frequencies match popgym's (statistical)", "[battleship]") {
  // Per-cell ship probabilities on the Easy board, measured from popgym 1.0.7 over 100,000 resets (sd < 0.0014):
  // sequential rejection sampling favours the centre.
  const std::vector<std::pair<Cell, double>> reference = {{{0, 0}, 0.092}, {{0, 3}, 0.183}, {{1, 1}, 0.170},
                                                          {{3, 3}, 0.247}, {{4, 4}, 0.247}, {{7, 7}, 0.092}};
  Battleship env("popgym/BattleshipEasy", {.board_size = 8});
  std::vector<float> obs(1);
  constexpr int kResets = 20000;
  std::vector<int> count(reference.size(), 0);
  for (int seed = 0; seed < kResets; ++seed) {
    env.reset(static_cast<uint64_t>(seed), obs);
    for (size_t i = 0; i < reference.size(); ++i)
      count[i] += env.is_ship(reference[i].first.first, reference[i].first.second);
  }
  // The C++ frequency has sd <= 0.0031; 0.012 is about 4 sd of the difference.
  for (size_t i = 0; i < reference.size(); ++i) {
    INFO("cell " << reference[i].first.first << "," << reference[i].first.second);
    CHECK(static_cast<double>(count[i]) / kResets == Approx(reference[i].second).margin(0.012));
  }
}

TEST_CASE("Battleship ships are straight and a custom fleet gets exactly its sizes", "[battleship]") {
  // One ship of 5 on a 5x5 board is a full row or a full column.
  Battleship env("test/Battleship", {.board_size = 5, .ship_sizes = {5}});
  std::vector<float> obs(1);
  for (uint64_t seed = 0; seed < 100; ++seed) {
    env.reset(seed, obs);
    const auto ship = cells(env, true);
    REQUIRE(ship.size() == 5);
    const bool row = std::all_of(ship.begin(), ship.end(), [&](const Cell& c) { return c.first == ship[0].first; });
    const bool col = std::all_of(ship.begin(), ship.end(), [&](const Cell& c) { return c.second == ship[0].second; });
    REQUIRE((row || col));
  }
  CHECK_THROWS_AS(Battleship("x/Bad", {.board_size = 3, .ship_sizes = {4}}), rlm::EnvError);
  CHECK_THROWS_AS(Battleship("x/Bad", {.board_size = 3, .ship_sizes = {3, 3, 3}}), rlm::EnvError);  // no water
  CHECK_THROWS_AS(Battleship("x/Bad", {.board_size = 0}), rlm::EnvError);
}

TEST_CASE("Battleship hit, repeat shot and miss (test_hit_miss)", "[battleship]") {
  for (const auto& [id, b] : kLevels) {
    auto env = make_env(id, kRaw);
    const auto& bs = dynamic_cast<const Battleship&>(*env);
    std::vector<float> obs(1);
    env->reset(7, obs);
    const Cell ship = cells(bs, true).front();
    const Cell water = cells(bs, false).front();
    const float miss = static_cast<float>(-1.0 / (b * b - 12));
    StepResult r = fire(*env, ship, obs);
    CHECK(obs[0] == 1);
    CHECK(r.reward == static_cast<float>(1.0 / 12));
    r = fire(*env, ship, obs);  // the same cell again is a miss
    CHECK(obs[0] == 0);
    CHECK(r.reward == miss);
    r = fire(*env, water, obs);
    CHECK(obs[0] == 0);
    CHECK(r.reward == miss);
    CHECK(bs.hits() == 1);
    CHECK(bs.steps() == 3);
    CHECK(bs.guessed(ship.first, ship.second));
    CHECK(bs.guessed(water.first, water.second));
  }
}

TEST_CASE("Battleship return range: all hits 1, all misses -B*B/(B*B-12), every cell once 0 (test_reward_sum)",
          "[battleship]") {
  for (const auto& [id, b] : kLevels) {
    INFO(id);
    auto env = make_env(id, kRaw);
    const auto& bs = dynamic_cast<const Battleship&>(*env);
    std::vector<float> obs(1);

    // (a) Best: only ship cells; terminated exactly on the 12th hit.
    env->reset(1, obs);
    double total = 0;
    const auto ships = cells(bs, true);
    for (size_t i = 0; i < ships.size(); ++i) {
      const StepResult r = fire(*env, ships[i], obs);
      total += r.reward;
      REQUIRE(obs[0] == 1);
      REQUIRE(r.terminated == (i + 1 == ships.size()));
      REQUIRE_FALSE(r.truncated);
    }
    CHECK(total == Approx(1.0).margin(1e-6));

    // (b) Worst: B*B misses (upstream cycles over two water cells); truncated exactly at step B*B, return below -1.
    env->reset(2, obs);
    total = 0;
    const auto water = cells(bs, false);
    for (int i = 0; i < b * b; ++i) {
      const StepResult r = fire(*env, water[static_cast<size_t>(i % 2)], obs);
      total += r.reward;
      REQUIRE_FALSE(r.terminated);
      REQUIRE(r.truncated == (i + 1 == b * b));
    }
    const double worst = -static_cast<double>(b * b) / (b * b - 12);
    CHECK(total == Approx(worst).margin(1e-5));
    CHECK(worst < -1.0);

    // (c) Every cell once, row-major, stepping on after the episode terminated as upstream's test does: return 0.
    env->reset(3, obs);
    total = 0;
    for (int r = 0; r < b; ++r)
      for (int c = 0; c < b; ++c) total += fire(*env, {r, c}, obs).reward;
    CHECK(total == Approx(0.0).margin(1e-5));
  }
}

TEST_CASE("Battleship: a sinking shot on step B*B is both terminated and truncated", "[battleship]") {
  for (const auto& [id, b] : kLevels) {
    auto env = make_env(id, kRaw);
    const auto& bs = dynamic_cast<const Battleship&>(*env);
    std::vector<float> obs(1);
    env->reset(11, obs);
    auto order = cells(bs, false);
    const auto ships = cells(bs, true);
    order.insert(order.end(), ships.begin(), ships.end());
    double total = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      const StepResult r = fire(*env, order[i], obs);
      total += r.reward;
      const bool last = i + 1 == order.size();
      REQUIRE(r.terminated == last);
      REQUIRE(r.truncated == last);
    }
    CHECK(total == Approx(0.0).margin(1e-5));
  }
}

TEST_CASE("Battleship get_state is (board, guesses, last obs) and stays in the state space", "[battleship]") {
  auto env = make_env("popgym/BattleshipEasy", kRaw);
  const auto& bs = dynamic_cast<const Battleship&>(*env);
  std::vector<float> obs(1);
  env->reset(5, obs);
  auto state = state_of(*env);
  REQUIRE(env->state_space()->contains(state));
  for (int i = 0; i < 64; ++i) {
    CHECK(state[static_cast<size_t>(i)] == (bs.is_ship(i / 8, i % 8) ? 1.0f : 0.0f));
    CHECK(state[static_cast<size_t>(64 + i)] == 0);
  }
  CHECK(state[128] == 0);
  const Cell ship = cells(bs, true).front();
  fire(*env, ship, obs);
  state = state_of(*env);
  CHECK(state[static_cast<size_t>(64 + ship.first * 8 + ship.second)] == 1);
  CHECK(state[128] == 1);
  // base_env_test test_spaces: state in its space after every step of a random episode.
  const test::Episode ep = test::run_episode(*env, 9, test::random_policy(env->action_space(), 9), 100);
  CHECK(env->state_space()->contains(state_of(*env)));
}

TEST_CASE("Battleship restore_golden starts from the given board", "[battleship]") {
  Battleship env("popgym/BattleshipEasy", {.board_size = 8});
  std::vector<int> board(64, 0);
  for (int c = 0; c < 12; ++c) board[static_cast<size_t>(c)] = 1;  // the top row and half the next
  std::vector<float> obs(1, 5.0f);
  env.restore_golden(nlohmann::json{{"board", board}}, obs);
  CHECK(obs[0] == 0);
  CHECK(env.is_ship(0, 7));
  CHECK(env.is_ship(1, 3));
  CHECK_FALSE(env.is_ship(1, 4));
  CHECK_THROWS_AS(env.restore_golden(nlohmann::json{{"board", std::vector<int>(10, 0)}}, obs), rlm::EnvError);
}

TEST_CASE("Battleship rejects invalid actions and stepping before reset", "[battleship]") {
  auto env = make_env("popgym/BattleshipEasy", kRaw);
  std::vector<float> obs(1);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0, 0}, obs), Catch::Contains("before the first reset"));
  env->reset(0, obs);
  try {
    env->step(std::vector<float>{8, 0}, obs);
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()) ==
          "popgym-BattleshipEasy-v0: invalid action [8, 0] for action space MultiDiscrete([8, 8])");
  }
  CHECK_THROWS_AS(env->step(std::vector<float>{-1, 0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{0.5f, 0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{3}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{1, 2, 3}, obs), rlm::EnvError);
  // The invalid actions did not count as steps.
  CHECK(dynamic_cast<const Battleship&>(*env).steps() == 0);
}

TEST_CASE("Battleship state in its space at every step and replayed from the seed (test_spaces, test_np_random)",
          "[battleship]") {
  for (const char* id : {"popgym/BattleshipEasy", "popgym/BattleshipMedium", "popgym/BattleshipHard"}) {
    INFO(id);
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 1ull, 2ull}) CHECK(test::check_states_random_episode(*env, seed) > 0);
  }
}
