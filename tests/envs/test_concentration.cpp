// Concentration oracle tests (popgym@410d5aa tests/test_concentration.py plus the env code): spaces and lengths per
// level, perfect games return exactly 1 (ranks, two decks, colours), always flipping position 0 returns exactly -1,
// flipping face-up cards costs -|in play|/L, and the obs of a mismatch still shows both cards.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/concentration.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::CardCategory;
using rlm::envs::popgym::Concentration;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};

struct Level {
  std::string id;
  int n, f, length;
};
const std::vector<Level> kLevels = {{"popgym/ConcentrationEasy", 52, 2, 104},
                                    {"popgym/ConcentrationMedium", 104, 2, 208},
                                    {"popgym/ConcentrationHard", 52, 13, 104}};

StepResult flip(Concentration& env, int position, std::vector<float>& obs) {
  return env.step(std::vector<float>{static_cast<float>(position)}, obs);
}

/// popgym's perfect games: for each category, flip its positions in board order (pairs close on every 2nd flip).
/// Returns the return; checks every second flip pays the success reward and the game ends terminated at the end.
double play_perfect(Concentration& env, uint64_t seed) {
  std::vector<float> obs(static_cast<size_t>(env.num_positions()));
  env.reset(seed, obs);
  double total = 0;
  StepResult r;
  for (int c = 0; c < env.facedown_code(); ++c) {
    int j = 0;
    for (int p = 0; p < env.num_positions(); ++p) {
      if (env.category_at(p) != c) continue;
      REQUIRE_FALSE((r.terminated || r.truncated));
      r = flip(env, p, obs);
      REQUIRE(env.num_in_play() <= 1);
      total += r.reward;
      if (j++ % 2 == 1) REQUIRE(r.reward == static_cast<float>(env.success_reward()));
    }
  }
  CHECK(r.terminated);
  CHECK_FALSE(r.truncated);
  CHECK(env.num_face_up() == env.num_positions());
  return total;
}
}  // namespace

TEST_CASE("Concentration spaces and episode length per difficulty", "[concentration]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    const auto n = static_cast<size_t>(level.n);
    CHECK(env->observation_space() == Space::multi_discrete(std::vector<int64_t>(n, level.f + 1)));
    CHECK(env->action_space() == Space::discrete(level.n));
    CHECK(env->max_episode_steps() == level.length);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::tuple({Space::multi_discrete(std::vector<int64_t>(n, level.f)),
                                               Space::multi_discrete(std::vector<int64_t>(n, 2)),
                                               Space::discrete(level.n), Space::discrete(level.n)}));
    const auto& c = dynamic_cast<const Concentration&>(*env);
    CHECK(c.success_reward() == 1.0 / (level.n / 2));
    CHECK(c.failure_reward() == -1.0 / level.length);
    for (uint64_t seed : {0ull, 5ull}) {
      std::vector<float> obs(n);
      env->reset(seed, obs);
      for (float o : obs) REQUIRE(o == static_cast<float>(level.f));  // all face down
      // A random player almost never clears the board: it is truncated at step L.
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      CHECK(ep.length() == level.length);
      CHECK(ep.truncated.back() == 1);
      CHECK(test::check_states_random_episode(*env, seed) == level.length);
    }
  }
}

TEST_CASE("Concentration perfect games return exactly 1", "[concentration]") {
  // popgym test_perfect_game (ranks, 1 deck = Hard), test_two_decks (ranks, 2 decks), test_perfect_game_colors
  // (colours, 1 deck = Easy), plus Medium (colours, 2 decks).
  Concentration hard("popgym/ConcentrationHard", {.num_decks = 1, .deck_type = CardCategory::Ranks});
  Concentration two_decks("x/ConcentrationTwoDeckRanks", {.num_decks = 2, .deck_type = CardCategory::Ranks});
  Concentration easy("popgym/ConcentrationEasy", {.num_decks = 1, .deck_type = CardCategory::Colors});
  Concentration medium("popgym/ConcentrationMedium", {.num_decks = 2, .deck_type = CardCategory::Colors});
  for (Concentration* env : {&hard, &two_decks, &easy, &medium})
    for (uint64_t seed : {0ull, 1ull, 2ull}) {
      INFO(env->id() << " seed " << seed);
      CHECK(play_perfect(*env, seed) == Approx(1.0).margin(1e-5));
    }
}

// popgym test_worst_game (Hard) and test_worst_game_colors (Easy), and Medium.
TEST_CASE("Concentration always flipping position 0 returns exactly -1, truncated", "[concentration]") {
  for (const Level& level : kLevels) {
    auto env = make_env(level.id, kRaw);
    INFO(level.id);
    const test::Episode ep = test::run_episode(
        *env, 8, [](const test::Episode&) { return std::vector<float>{0}; }, 10000);
    CHECK(ep.length() == level.length);
    CHECK(ep.truncated.back() == 1);
    CHECK(ep.terminated.back() == 0);
    CHECK(ep.episode_return() == Approx(-1.0).margin(1e-5));
  }
}

// popgym test_repeatedly_flip_faceup (Hard there; every level and several seeds here): find one pair, then keep
// flipping its (face-up) cards until the end.
TEST_CASE("Concentration flipping face-up cards never pays", "[concentration]") {
  for (const Level& level : kLevels) {
    auto made = make_env(level.id, kRaw);
    auto& env = dynamic_cast<Concentration&>(*made);
    for (uint64_t seed : {0ull, 1ull, 2ull, 3ull}) {
      INFO(level.id << " seed " << seed);
      std::vector<float> obs(static_cast<size_t>(level.n));
      env.reset(seed, obs);
      double total = 0;
      StepResult r = flip(env, 0, obs);
      total += r.reward;
      std::vector<float> cards = {obs[0]};
      bool found = false;
      int i = 0;
      while (!(r.terminated || r.truncated) && !found) {
        ++i;
        r = flip(env, i, obs);
        total += r.reward;
        found = std::find(cards.begin(), cards.end(), obs[static_cast<size_t>(i)]) != cards.end();
        cards.push_back(obs[static_cast<size_t>(i)]);
      }
      int j = static_cast<int>(std::find(cards.begin(), cards.end(), obs[static_cast<size_t>(i)]) - cards.begin());
      if (!(r.terminated || r.truncated) && i % 2 != 1) {
        r = flip(env, j, obs);
        total += r.reward;
      }
      int steps = 0;
      while (!(r.terminated || r.truncated)) {
        r = flip(env, i, obs);
        total += r.reward;
        std::swap(i, j);
        ++steps;
      }
      CHECK(steps > 0);
      CHECK(r.truncated);
      CHECK(total == Approx(env.success_reward() + (level.length - 2) * env.failure_reward()).margin(1e-5));
    }
  }
}

TEST_CASE("Concentration step rules on a known board", "[concentration]") {
  // Identity order: position p holds card p, whose colour is p % 2 (Easy: 0 and 2 match, 0 and 1 do not).
  Concentration env("popgym/ConcentrationEasy", {.num_decks = 1, .deck_type = CardCategory::Colors});
  std::vector<int> order(52);
  std::iota(order.begin(), order.end(), 0);
  std::vector<float> obs(52), state(106);
  env.restore_golden({{"deck_idx", order}}, obs);
  const float facedown = 2;
  auto shown = [&] {
    std::vector<int> p;
    for (int i = 0; i < 52; ++i)
      if (obs[static_cast<size_t>(i)] != facedown) p.push_back(i);
    return p;
  };
  env.write_state(state);
  CHECK(state[104] == facedown);  // no flip yet: both default to the face-down code
  CHECK(state[105] == facedown);

  CHECK(flip(env, 0, obs).reward == 0.0f);
  env.write_state(state);
  CHECK(state[104] == 0);
  CHECK(state[105] == facedown);
  // A mismatch costs -2/L, and its obs still shows both cards ...
  CHECK(flip(env, 1, obs).reward == static_cast<float>(-2 / 104.0));
  CHECK(shown() == std::vector<int>{0, 1});
  CHECK(obs[1] == 1);
  env.write_state(state);
  CHECK(state[104] == 0);
  CHECK(state[105] == 1);
  // ... which are face down again in the next obs.
  CHECK(flip(env, 2, obs).reward == 0.0f);
  CHECK(shown() == std::vector<int>{2});
  // The same position twice is no match.
  CHECK(flip(env, 2, obs).reward == static_cast<float>(-2 / 104.0));
  // A match pays 1/26 and stays face up.
  CHECK(flip(env, 0, obs).reward == 0.0f);
  CHECK(flip(env, 2, obs).reward == static_cast<float>(1 / 26.0));
  CHECK(shown() == std::vector<int>{0, 2});
  CHECK(env.face_up(0));
  CHECK(env.face_up(2));
  env.write_state(state);
  CHECK(state[52] == 1);
  CHECK(state[53] == 0);
  CHECK(state[54] == 1);
  // A face-up card as first flip costs -1/L and ends the pair; as second flip -2/L.
  CHECK(flip(env, 0, obs).reward == static_cast<float>(-1 / 104.0));
  CHECK(env.num_in_play() == 0);
  env.write_state(state);
  CHECK(state[104] == 0);
  CHECK(state[105] == facedown);
  CHECK(flip(env, 1, obs).reward == 0.0f);
  CHECK(flip(env, 2, obs).reward == static_cast<float>(-2 / 104.0));
  CHECK(shown() == std::vector<int>{0, 1, 2});

  // Truncation comes with step L exactly (9 steps done), and nothing stops steps afterwards, as upstream.
  for (int t = 10; t <= 103; ++t) REQUIRE_FALSE(flip(env, 5, obs).truncated);
  CHECK(flip(env, 5, obs).truncated);
  CHECK(flip(env, 5, obs).truncated);
}

TEST_CASE("Concentration rejects invalid actions, suits and steps before reset", "[concentration]") {
  auto env = make_env("popgym/ConcentrationEasy", kRaw);
  std::vector<float> obs(52);
  env->reset(0, obs);
  try {
    env->step(std::vector<float>{52}, obs);
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()) == "popgym-ConcentrationEasy-v0: invalid action 52 for action space Discrete(52)");
  }
  CHECK_THROWS_AS(env->step(std::vector<float>{-1}, obs), rlm::EnvError);
  Concentration fresh("popgym/ConcentrationEasy", {});
  CHECK_THROWS_AS(fresh.step(std::vector<float>{0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(Concentration("x/Bad", {.num_decks = 0}), rlm::EnvError);
  CHECK_THROWS_AS(Concentration("x/Bad", {.num_decks = 1, .deck_type = CardCategory::Suits}), rlm::EnvError);
}
