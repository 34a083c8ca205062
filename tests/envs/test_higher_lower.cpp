// HigherLower oracle tests (popgym@410d5aa tests/test_higher_lower.py plus the env code): spaces and lengths per
// level, always-higher returns (#rises - #falls)/N, an oracle reaches the bound (N-1)/N on a tie-free deck and its
// opposite -(N-1)/N, ties pay 0, and the state counts every rank seen.
#include <catch2/catch.hpp>
#include <vector>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/higher_lower.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::HigherLower;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
const std::vector<std::pair<std::string, int>> kLevels = {
    {"popgym/HigherLowerEasy", 52}, {"popgym/HigherLowerMedium", 104}, {"popgym/HigherLowerHard", 156}};

/// Peeks at the next card: "higher" (0) when it is at least as high, else "lower"; `flip` answers the opposite.
std::function<std::vector<float>(const test::Episode&)> oracle(const HigherLower& env, bool flip) {
  return [&env, flip](const test::Episode&) {
    const bool higher = env.next_rank() >= env.current_rank();
    return std::vector<float>{static_cast<float>((higher != flip) ? HigherLower::kHigher : HigherLower::kLower)};
  };
}
}  // namespace

TEST_CASE("HigherLower spaces and episode length per difficulty", "[higherlower]") {
  for (const auto& [id, n] : kLevels) {
    INFO(id);
    auto env = make_env(id, kRaw);
    CHECK(env->observation_space() == Space::discrete(13));
    CHECK(env->action_space() == Space::discrete(2));
    CHECK(env->max_episode_steps() == n - 1);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::box(std::vector<float>(13, 0.0f), std::vector<float>(13, 1.0f)));
    for (uint64_t seed : {0ull, 5ull}) {
      const test::Episode ep = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 10000);
      CHECK(ep.length() == n - 1);
      CHECK(ep.terminated.back() == 1);
      for (uint8_t tr : ep.truncated) REQUIRE(tr == 0);
      // Every card has been seen: the state is all ones.
      std::vector<float> state(13);
      env->write_state(state);
      for (float s : state) CHECK(s == 1.0f);
      CHECK(test::check_states_random_episode(*env, seed) == n - 1);
    }
  }
}

// popgym test_episode_higher (Easy there; every level here).
TEST_CASE("HigherLower always guessing higher returns (#rises - #falls)/N", "[higherlower]") {
  for (const auto& [id, n] : kLevels) {
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 1ull, 2ull, 3ull}) {
      INFO(id << " seed " << seed);
      const test::Episode ep = test::run_episode(
          *env, seed, [](const test::Episode&) { return std::vector<float>{0}; }, 10000);
      int rises = 0, falls = 0;
      for (size_t t = 1; t < ep.obs.size(); ++t) {
        rises += ep.obs[t][0] > ep.obs[t - 1][0];
        falls += ep.obs[t][0] < ep.obs[t - 1][0];
        // A tie pays exactly 0, anything else +-1/N.
        const float r = ep.rewards[t - 1];
        if (ep.obs[t][0] == ep.obs[t - 1][0])
          REQUIRE(r == 0.0f);
        else
          REQUIRE(std::abs(r) == static_cast<float>(1.0 / n));
      }
      CHECK(ep.episode_return() == Approx(static_cast<double>(rises - falls) / n).margin(1e-5));
    }
  }
}

TEST_CASE("HigherLower best and worst returns are +-(N-1)/N on a tie-free deck", "[higherlower]") {
  for (const auto& [id, n] : kLevels) {
    INFO(id);
    auto env = make_env(id, kRaw);
    auto& hl = dynamic_cast<HigherLower&>(*env);
    // Cards are dealt from the end; ordering suit by suit makes consecutive ranks run 0..12, 0..12, ...: no ties.
    std::vector<int> order;
    for (int deck = 0; deck < n / 52; ++deck)
      for (int suit = 0; suit < 4; ++suit)
        for (int rank = 0; rank < 13; ++rank) order.push_back(deck * 52 + rank * 4 + suit);
    for (bool flip : {false, true}) {
      std::vector<float> obs(1);
      hl.restore_golden({{"deck_idx", order}}, obs);
      const auto policy = oracle(hl, flip);
      test::Episode ep;
      ep.obs.push_back(obs);
      StepResult r;
      do {
        r = hl.step(policy(ep), obs);
        ep.obs.push_back(obs);
        ep.rewards.push_back(r.reward);
      } while (!r.terminated);
      CHECK(ep.length() == n - 1);
      const double bound = static_cast<double>(n - 1) / n;
      CHECK(ep.episode_return() == Approx(flip ? -bound : bound).margin(1e-5));
    }
    // On shuffled decks the oracle is never wrong, only tied.
    for (uint64_t seed : {0ull, 1ull}) {
      const test::Episode ep = test::run_episode(*env, seed, oracle(hl, false), 10000);
      for (float reward : ep.rewards) REQUIRE(reward >= 0.0f);
      CHECK(ep.episode_return() <= static_cast<double>(n - 1) / n + 1e-6);
    }
  }
}

TEST_CASE("HigherLower state counts the ranks seen, the first card included", "[higherlower]") {
  auto env = make_env("popgym/HigherLowerMedium", kRaw);
  std::vector<float> obs(1), state(13);
  env->reset(4, obs);
  env->write_state(state);
  for (int r = 0; r < 13; ++r) CHECK(state[static_cast<size_t>(r)] == (r == obs[0] ? 1.0f / 8 : 0.0f));
  std::vector<int> seen(13);
  ++seen[static_cast<size_t>(obs[0])];
  for (int t = 0; t < 30; ++t) {
    env->step(std::vector<float>{1}, obs);
    ++seen[static_cast<size_t>(obs[0])];
  }
  env->write_state(state);
  for (int r = 0; r < 13; ++r)
    CHECK(state[static_cast<size_t>(r)] == static_cast<float>(seen[static_cast<size_t>(r)] / 8.0));
}

TEST_CASE("HigherLower rejects invalid actions and steps past the end", "[higherlower]") {
  auto env = make_env("popgym/HigherLowerEasy", kRaw);
  std::vector<float> obs(1);
  env->reset(0, obs);
  try {
    env->step(std::vector<float>{2}, obs);
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    CHECK(std::string(e.what()) == "popgym-HigherLowerEasy-v0: invalid action 2 for action space Discrete(2)");
  }
  CHECK_THROWS_AS(env->step(std::vector<float>{-1}, obs), rlm::EnvError);
  for (int t = 0; t < 51; ++t) env->step(std::vector<float>{0}, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0}, obs), Catch::Contains("after the episode ended"));

  HigherLower fresh("popgym/HigherLowerEasy", {});
  CHECK_THROWS_AS(fresh.step(std::vector<float>{0}, obs), rlm::EnvError);
  CHECK_THROWS_AS(HigherLower("x/Bad", {.num_decks = 0}), rlm::EnvError);
}
