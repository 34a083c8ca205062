// RepeatFirst oracle tests (popgym@410d5aa tests/test_repeat_first.py plus the env code): lengths per level, a perfect
// agent returns exactly 1, a random one about -0.5, invalid actions name the env.
#include <catch2/catch.hpp>
#include <numeric>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/repeat_first.hpp"
#include "envs/registry.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::RepeatFirst;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
}

TEST_CASE("RepeatFirst spaces and episode length per difficulty", "[repeat_first]") {
  const std::vector<std::pair<std::string, int64_t>> levels = {
      {"popgym/RepeatFirstEasy", 51}, {"popgym/RepeatFirstMedium", 415}, {"popgym/RepeatFirstHard", 831}};
  for (const auto& [id, length] : levels) {
    auto env = make_env(id, kRaw);
    CHECK(env->observation_space() == Space::discrete(4));
    CHECK(env->action_space() == Space::discrete(4));
    CHECK(env->max_episode_steps() == length);
    const test::Episode ep = test::run_episode(*env, 3, test::random_policy(env->action_space(), 4), length + 5);
    CHECK(ep.length() == length);
    CHECK(ep.terminated.back() == 1);
  }
}

TEST_CASE("RepeatFirst perfect policy returns exactly 1 and terminates on the last card", "[repeat_first]") {
  for (const char* id : {"popgym/RepeatFirstEasy", "popgym/RepeatFirstMedium", "popgym/RepeatFirstHard"}) {
    auto env = make_env(id, kRaw);
    const auto& rf = dynamic_cast<const RepeatFirst&>(*env);
    for (uint64_t seed : {0ull, 1ull, 99ull}) {
      const test::Episode ep = test::run_episode(
          *env, seed, [](const test::Episode& e) { return std::vector<float>{e.obs[0][0]}; }, 10000);
      INFO(id << " seed " << seed);
      CHECK(ep.length() == env->max_episode_steps());
      CHECK(ep.episode_return() == Approx(1.0).margin(1e-6));
      for (int64_t t = 0; t < ep.length(); ++t) {
        REQUIRE(ep.rewards[static_cast<size_t>(t)] > 0);
        REQUIRE(ep.truncated[static_cast<size_t>(t)] == 0);
        REQUIRE(ep.terminated[static_cast<size_t>(t)] == (t + 1 == ep.length()));
      }
      for (const auto& o : ep.obs) REQUIRE((o[0] >= 0 && o[0] < 4));
      CHECK(rf.target_suit() == static_cast<int>(ep.obs[0][0]));
      // Every card was dealt: 13 * num_decks per suit, the first card included.
      const int per_suit = rf.deck().num_cards() / 4;
      for (int n : rf.dealt_per_suit()) CHECK(n == per_suit);
      CHECK(rf.deck().remaining() == 0);
    }
  }
}

TEST_CASE("RepeatFirst all-wrong policy returns exactly -1", "[repeat_first]") {
  auto env = make_env("popgym/RepeatFirstEasy", kRaw);
  const test::Episode ep = test::run_episode(
      *env, 5, [](const test::Episode& e) { return std::vector<float>{std::fmod(e.obs[0][0] + 1, 4.0f)}; }, 100);
  CHECK(ep.episode_return() == Approx(-1.0).margin(1e-6));
}

TEST_CASE("RepeatFirst random policy averages about -0.5", "[repeat_first]") {
  auto env = make_env("popgym/RepeatFirstEasy", kRaw);
  const auto policy = test::random_policy(env->action_space(), 123);
  constexpr int kEpisodes = 2000;
  double total = 0;
  for (int i = 0; i < kEpisodes; ++i)
    total += test::run_episode(*env, static_cast<uint64_t>(i), policy, 100).episode_return();
  // One episode has sd ~0.12, so the mean of 2000 has sd ~0.003.
  CHECK(total / kEpisodes == Approx(-0.5).margin(0.02));
}

TEST_CASE("RepeatFirst rejects invalid actions and steps past the end", "[repeat_first]") {
  auto env = make_env("popgym/RepeatFirstEasy", kRaw);
  std::vector<float> obs(1);
  env->reset(0, obs);
  try {
    env->step(std::vector<float>{7}, obs);
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()) == "popgym-RepeatFirstEasy-v0: invalid action 7 for action space Discrete(4)");
  }
  CHECK_THROWS_AS(env->step(std::vector<float>{-1}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{1.5f}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{0, 0}, obs), rlm::EnvError);
  // The invalid actions did not advance the episode: 51 valid steps still fit.
  for (int t = 0; t < 51; ++t) env->step(std::vector<float>{0}, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0}, obs), Catch::Contains("after the episode ended"));

  RepeatFirst fresh("popgym/RepeatFirstEasy", {});
  CHECK_THROWS_AS(fresh.step(std::vector<float>{0}, obs), rlm::EnvError);  // before any reset
  CHECK_THROWS_AS(RepeatFirst("x/Bad", {.num_decks = 0}), rlm::EnvError);
}
