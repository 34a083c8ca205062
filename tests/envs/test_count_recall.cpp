// CountRecall oracle tests (popgym@410d5aa tests/test_count_recall.py plus the env code): spaces and lengths per
// level (action Discrete(M+1), or the legacy Discrete(M)), a perfect counter returns exactly 1 and an all-wrong one -1,
// the target counts the value card dealt alongside the query.
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/count_recall.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::CardCategory;
using rlm::envs::popgym::CountRecall;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};

struct Level {
  std::string id;
  int n, d, m;
};
const std::vector<Level> kLevels = {{"popgym/CountRecallEasy", 52, 2, 26},
                                    {"popgym/CountRecallMedium", 104, 4, 26},
                                    {"popgym/CountRecallHard", 208, 13, 16}};

/// popgym's test policy: counts the value categories from the obs alone and answers the count of the query, plus
/// `offset` (wrapped into the action space, so an offset never yields an invalid action).
std::function<std::vector<float>(const test::Episode&)> counting_policy(int num_categories, int num_actions,
                                                                        int offset) {
  return [=](const test::Episode& e) {
    std::vector<int> counts(static_cast<size_t>(num_categories));
    for (const auto& o : e.obs) ++counts[static_cast<size_t>(o[0])];
    const int answer = counts[static_cast<size_t>(e.obs.back()[1])] + offset;
    return std::vector<float>{static_cast<float>(answer % num_actions)};
  };
}
}  // namespace

TEST_CASE("CountRecall spaces and episode length per difficulty", "[countrecall]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    const auto& cr = dynamic_cast<const CountRecall&>(*env);
    CHECK(env->observation_space() == Space::multi_discrete({level.d, level.d}));
    CHECK(env->action_space() == Space::discrete(level.m + 1));
    CHECK(cr.max_card_count() == level.m);
    CHECK(env->max_episode_steps() == level.n - 1);
    const std::vector<float> zeros(static_cast<size_t>(level.d), 0.0f), ones(static_cast<size_t>(level.d), 1.0f);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() ==
          Space::tuple({Space::box(zeros, ones), Space::box(zeros, ones), Space::multi_discrete({level.d, level.d})}));
    for (uint64_t seed : {0ull, 5ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      CHECK(ep.length() == level.n - 1);
      CHECK(ep.terminated.back() == 1);
      for (uint8_t tr : ep.truncated) REQUIRE(tr == 0);
      CHECK(test::check_states_random_episode(*env, seed) == level.n - 1);
      // After the last step both decks are dealt out: every category was counted M times.
      for (int c = 0; c < level.d; ++c) {
        CHECK(cr.counts()[static_cast<size_t>(c)] == level.m);
        CHECK(cr.query_counts()[static_cast<size_t>(c)] == level.m);
      }
    }
  }
}

// popgym test_perfect (Easy there; every level here): each reward is exactly 1/(N-1), the return 1.
TEST_CASE("CountRecall perfect counting returns exactly 1", "[countrecall]") {
  for (const Level& level : kLevels) {
    auto env = make_env(level.id, kRaw);
    for (uint64_t seed : {0ull, 1ull, 77ull}) {
      INFO(level.id << " seed " << seed);
      const test::Episode ep = test::run_episode(*env, seed, counting_policy(level.d, level.m + 1, 0), 10000);
      CHECK(ep.length() == level.n - 1);
      for (float r : ep.rewards) REQUIRE(r == static_cast<float>(1.0 / (level.n - 1)));
      for (const auto& a : ep.actions) REQUIRE(env->action_space().contains(a));
      CHECK(ep.episode_return() == Approx(1.0).margin(1e-5));
    }
  }
}

// popgym test_awful answers count + 2 and expects a return below 0.9; answering count + 2 (mod M+1) is always wrong,
// so the return is exactly the worst, -1. (Upstream's count + 2 can exceed M, which this port rejects as invalid.)
TEST_CASE("CountRecall answering the count plus two returns exactly -1", "[countrecall]") {
  for (const Level& level : kLevels) {
    auto env = make_env(level.id, kRaw);
    INFO(level.id);
    const test::Episode ep = test::run_episode(*env, 3, counting_policy(level.d, level.m + 1, 2), 10000);
    CHECK(ep.length() == level.n - 1);
    CHECK(ep.episode_return() < 0.9);
    CHECK(ep.episode_return() == Approx(-1.0).margin(1e-5));
  }
}

TEST_CASE("CountRecall target counts the value card dealt alongside the query", "[countrecall]") {
  // Easy (colours): both decks deal from the end of their order. Value cards 1 (red), 3 (red), 0 (black) and query
  // cards 5 (red), 2 (black), ...: at step 1 the answer for query 'red' is 1 (card 1 counts), at step 2 the answer
  // for 'black' is 0 (card 0 is dealt by that very step and does not count yet).
  std::vector<int> value(52), query(52);
  std::iota(value.begin(), value.end(), 0);
  std::iota(query.begin(), query.end(), 0);
  std::swap(value[51], value[1]);  // deals 1 first
  std::swap(value[50], value[3]);  // then 3
  std::swap(value[49], value[0]);  // then 0
  std::swap(query[51], query[5]);
  std::swap(query[50], query[2]);
  CountRecall env("popgym/CountRecallEasy", {});
  std::vector<float> obs(2);
  env.restore_golden({{"value_idx", value}, {"query_idx", query}}, obs);
  CHECK(obs == std::vector<float>{1, 1});
  CHECK(env.target() == 1);
  StepResult r = env.step(std::vector<float>{1}, obs);
  CHECK(r.reward > 0);
  CHECK(obs == std::vector<float>{1, 0});
  CHECK(env.target() == 0);
  r = env.step(std::vector<float>{0}, obs);
  CHECK(r.reward > 0);
  CHECK(obs[0] == 0);
}

TEST_CASE("CountRecall legacy action space is Discrete(M) and cannot answer M", "[countrecall]") {
  CountRecall legacy("popgym/CountRecallEasy", {.legacy_action_space = true});
  CHECK(legacy.action_space() == Space::discrete(26));
  std::vector<float> obs(2);
  legacy.reset(0, obs);
  CHECK_THROWS_AS(legacy.step(std::vector<float>{26}, obs), rlm::EnvError);
  // The last step's answer is often M = 26 (all cards of the queried colour are out), which the old space lacks.
  CountRecall current("popgym/CountRecallEasy", {});
  int answers_of_m = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    current.reset(seed, obs);
    for (int t = 0; t < 51; ++t) {
      answers_of_m += current.target() == 26;
      current.step(std::vector<float>{static_cast<float>(current.target())}, obs);
    }
  }
  CHECK(answers_of_m > 0);
}

TEST_CASE("CountRecall rejects invalid actions and steps past the end", "[countrecall]") {
  auto env = make_env("popgym/CountRecallHard", kRaw);
  std::vector<float> obs(2);
  env->reset(0, obs);
  try {
    env->step(std::vector<float>{17}, obs);
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()) == "popgym-CountRecallHard-v0: invalid action 17 for action space Discrete(17)");
  }
  CHECK_THROWS_AS(env->step(std::vector<float>{-1}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{2.5f}, obs), rlm::EnvError);
  for (int t = 0; t < 207; ++t) env->step(std::vector<float>{0}, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0}, obs), Catch::Contains("after the episode ended"));

  CountRecall fresh("popgym/CountRecallEasy", {});
  CHECK_THROWS_AS(fresh.step(std::vector<float>{0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(CountRecall("x/Bad", {.num_decks = 0}), rlm::EnvError);
}
