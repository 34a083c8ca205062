// Autoencode oracle tests (popgym@410d5aa tests/test_autoencode.py plus the env code): spaces and lengths per level,
// the watch/play timeline, a perfect recital returns exactly 1 and an all-wrong one -1, invalid actions name the env.
#include <catch2/catch.hpp>
#include <vector>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/autoencode.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::Autoencode;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
const std::vector<std::pair<std::string, int>> kLevels = {
    {"popgym/AutoencodeEasy", 52}, {"popgym/AutoencodeMedium", 104}, {"popgym/AutoencodeHard", 156}};
}  // namespace

TEST_CASE("Autoencode spaces and episode length per difficulty", "[autoencode]") {
  for (const auto& [id, n] : kLevels) {
    INFO(id);
    auto env = make_env(id, kRaw);
    CHECK(env->observation_space() == Space::tuple({Space::discrete(2), Space::discrete(4)}));
    CHECK(env->action_space() == Space::discrete(4));
    CHECK(env->max_episode_steps() == 2 * n - 1);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::tuple({Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(n), 4)),
                                               Space::discrete(2), Space::box({0}, {1})}));
    for (uint64_t seed : {0ull, 5ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      CHECK(ep.length() == 2 * n - 1);
      CHECK(ep.terminated.back() == 1);
      for (uint8_t tr : ep.truncated) REQUIRE(tr == 0);
      CHECK(test::check_states_random_episode(*env, seed) == 2 * n - 1);
    }
  }
}

// popgym test_full, at every level: watch with action 0 collecting the suits, then recite them backwards.
TEST_CASE("Autoencode full game: silent watch phase, then a reversed recital returns 1", "[autoencode]") {
  for (const auto& [id, n] : kLevels) {
    auto env = make_env(id, kRaw);
    const auto& ae = dynamic_cast<const Autoencode&>(*env);
    for (uint64_t seed : {0ull, 1ull, 42ull}) {
      INFO(id << " seed " << seed);
      std::vector<float> obs(2);
      env->reset(seed, obs);
      CHECK(obs[0] == Autoencode::kWatch);
      std::vector<float> seq = {obs[1]};
      double reward_sum = 0;
      StepResult r;
      int watch_steps = 0;
      while (obs[0] == Autoencode::kWatch) {
        r = env->step(std::vector<float>{0}, obs);
        seq.push_back(obs[1]);
        reward_sum += r.reward;
        REQUIRE(r.reward == 0.0f);
        ++watch_steps;
      }
      CHECK_FALSE((r.terminated || r.truncated));
      CHECK(reward_sum == 0);
      CHECK(watch_steps == n - 1);
      CHECK(static_cast<int>(seq.size()) == n);
      CHECK(ae.hand_size() == n);
      while (!seq.empty()) {
        REQUIRE_FALSE((r.terminated || r.truncated));
        r = env->step(std::vector<float>{seq.back()}, obs);
        seq.pop_back();
        REQUIRE(r.reward == Approx(1.0 / n).epsilon(1e-6));
        // Every play obs is (0, 0): upstream renders card id 0.
        REQUIRE(obs[0] == 0);
        REQUIRE(obs[1] == 0);
        reward_sum += r.reward;
      }
      CHECK(r.terminated);
      CHECK_FALSE(r.truncated);
      CHECK(ae.hand_size() == 0);
      CHECK(reward_sum == Approx(1.0).margin(1e-5));
    }
  }
}

TEST_CASE("Autoencode best and worst returns are exactly 1 and -1", "[autoencode]") {
  for (const auto& [id, n] : kLevels) {
    auto env = make_env(id, kRaw);
    const auto& ae = dynamic_cast<const Autoencode&>(*env);
    for (int offset : {0, 1, 3}) {
      INFO(id << " offset " << offset);
      const test::Episode ep = test::run_episode(
          *env, 11,
          [&](const test::Episode&) {
            const int suit = ae.next_recital_suit();
            return std::vector<float>{suit < 0 ? 2.0f : static_cast<float>((suit + offset) % 4)};
          },
          10000);
      CHECK(ep.length() == 2 * n - 1);
      CHECK(ep.terminated.back() == 1);
      CHECK(ep.episode_return() == Approx(offset == 0 ? 1.0 : -1.0).margin(1e-5));
    }
  }
}

TEST_CASE("Autoencode shows the last card with mode PLAY already (upstream quirk)", "[autoencode]") {
  auto env = make_env("popgym/AutoencodeEasy", kRaw);
  const test::Episode ep = test::run_episode(
      *env, 3, [](const test::Episode&) { return std::vector<float>{1}; }, 200);
  REQUIRE(ep.length() == 103);
  for (int t = 0; t < 51; ++t) CHECK(ep.obs[static_cast<size_t>(t)][0] == 1);  // reset obs and steps 1..50
  CHECK(ep.obs[51][0] == 0);  // step 51 deals the last card and already says PLAY
  // The 52 watched suits are a permutation of the shoe's: 13 of each.
  std::vector<int> per_suit(4);
  for (int t = 0; t <= 51; ++t) ++per_suit[static_cast<size_t>(ep.obs[static_cast<size_t>(t)][1])];
  CHECK(per_suit == std::vector<int>{13, 13, 13, 13});
}

TEST_CASE("Autoencode random policy averages about -0.5", "[autoencode]") {
  auto env = make_env("popgym/AutoencodeEasy", kRaw);
  const auto policy = test::random_policy(env->action_space(), 9);
  constexpr int kEpisodes = 1000;
  double total = 0;
  for (int i = 0; i < kEpisodes; ++i)
    total += test::run_episode(*env, static_cast<uint64_t>(i), policy, 200).episode_return();
  // One episode has sd ~0.12, so the mean of 1000 has sd ~0.004.
  CHECK(total / kEpisodes == Approx(-0.5).margin(0.02));
}

TEST_CASE("Autoencode rejects invalid actions and steps past the end", "[autoencode]") {
  auto env = make_env("popgym/AutoencodeEasy", kRaw);
  std::vector<float> obs(2);
  env->reset(0, obs);
  try {
    env->step(std::vector<float>{4}, obs);
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()) == "popgym-AutoencodeEasy-v0: invalid action 4 for action space Discrete(4)");
  }
  CHECK_THROWS_AS(env->step(std::vector<float>{-1}, obs), rlm::EnvError);
  CHECK_THROWS_AS(env->step(std::vector<float>{0.5f}, obs), rlm::EnvError);
  for (int t = 0; t < 103; ++t) env->step(std::vector<float>{0}, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0}, obs), Catch::Contains("after the episode ended"));

  Autoencode fresh("popgym/AutoencodeEasy", {});
  CHECK_THROWS_AS(fresh.step(std::vector<float>{0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(Autoencode("x/Bad", {.num_decks = 0}), rlm::EnvError);
}
