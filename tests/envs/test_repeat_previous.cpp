// RepeatPrevious oracle tests (popgym@410d5aa tests/test_repeat_previous.py plus the env code): the target at step t is
// the obs of step t-k, the first k-1 rewards are exactly 0, a perfect agent returns 1.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/repeat_previous.hpp"
#include "envs/registry.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::RepeatPrevious;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};

/// Answers obs[t-k] at step t (obs[0] is the reset obs); anything (0) while t < k.
auto perfect_policy(int k) {
  return [k](const test::Episode& e) {
    const auto t = static_cast<int64_t>(e.obs.size());  // the step about to be taken
    return std::vector<float>{t >= k ? e.obs[static_cast<size_t>(t - k)][0] : 0.0f};
  };
}

void check_perfect_episode(Env& env, int k, uint64_t seed) {
  const auto& rp = dynamic_cast<const RepeatPrevious&>(env);
  const test::Episode ep = test::run_episode(env, seed, perfect_policy(k), 100000);
  const int64_t n = env.max_episode_steps() + 1;  // cards
  INFO(env.id() << " k " << k << " seed " << seed);
  CHECK(static_cast<int64_t>(ep.obs.size()) == n);  // one obs per card
  CHECK(ep.length() == n - 1);
  for (int64_t t = 1; t <= ep.length(); ++t) {
    const auto i = static_cast<size_t>(t - 1);
    if (t < k) {
      REQUIRE(ep.rewards[i] == 0.0f);
    } else {
      REQUIRE(ep.rewards[i] == Approx(1.0 / static_cast<double>(n - k)));
    }
    REQUIRE(ep.truncated[i] == 0);
    REQUIRE(ep.terminated[i] == (t == ep.length()));
  }
  CHECK(ep.episode_return() == Approx(1.0).margin(1e-6));
  CHECK(rp.deck().remaining() == 0);
}

}  // namespace

TEST_CASE("RepeatPrevious spaces and lengths per difficulty", "[repeat_previous]") {
  const std::vector<std::tuple<std::string, int64_t, int>> levels = {{"popgym/RepeatPreviousEasy", 51, 4},
                                                                     {"popgym/RepeatPreviousMedium", 103, 32},
                                                                     {"popgym/RepeatPreviousHard", 155, 64}};
  for (const auto& [id, length, k] : levels) {
    auto env = make_env(id, kRaw);
    CHECK(env->observation_space() == Space::discrete(4));
    CHECK(env->action_space() == Space::discrete(4));
    CHECK(env->max_episode_steps() == length);
    CHECK(dynamic_cast<const RepeatPrevious&>(*env).k() == k);
    for (uint64_t seed : {0ull, 7ull}) check_perfect_episode(*env, k, seed);
  }
}

TEST_CASE("RepeatPrevious with popgym's test values k=2 and k=16", "[repeat_previous]") {
  for (int k : {1, 2, 16}) {
    RepeatPrevious env("popgym/RepeatPreviousCustom", {.num_decks = 1, .k = k});
    check_perfect_episode(env, k, 11);
  }
}

TEST_CASE("RepeatPrevious target_suit names the obs k-1 observations before the current one", "[repeat_previous]") {
  auto env = make_env("popgym/RepeatPreviousEasy", kRaw);
  const auto& rp = dynamic_cast<const RepeatPrevious&>(*env);
  std::vector<std::vector<float>> seen;
  std::vector<float> obs(1);
  env->reset(21, obs);
  seen.push_back(obs);
  for (int t = 1; t <= 51; ++t) {
    // Before step t the agent has seen obs[0..t-1]; the target is obs[t-4] once t >= 4.
    CHECK(rp.target_suit() == (t >= 4 ? static_cast<int>(seen[static_cast<size_t>(t - 4)][0]) : -1));
    env->step(std::vector<float>{0}, obs);
    seen.push_back(obs);
  }
}

TEST_CASE("RepeatPrevious all-wrong policy returns -1, random about -0.5", "[repeat_previous]") {
  auto env = make_env("popgym/RepeatPreviousEasy", kRaw);
  const auto perfect = perfect_policy(4);
  const test::Episode wrong = test::run_episode(
      *env, 3, [&](const test::Episode& e) { return std::vector<float>{std::fmod(perfect(e)[0] + 1, 4.0f)}; }, 100);
  CHECK(wrong.episode_return() == Approx(-1.0).margin(1e-6));

  const auto random = test::random_policy(env->action_space(), 5);
  double total = 0;
  for (int i = 0; i < 2000; ++i)
    total += test::run_episode(*env, static_cast<uint64_t>(i), random, 100).episode_return();
  CHECK(total / 2000 == Approx(-0.5).margin(0.02));
}

TEST_CASE("RepeatPrevious rejects invalid actions and configs", "[repeat_previous]") {
  auto env = make_env("popgym/RepeatPreviousHard", kRaw);
  std::vector<float> obs(1);
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{4}, obs),
                    "popgym-RepeatPreviousHard-v0: invalid action 4 for action space Discrete(4)");
  CHECK_THROWS_AS(RepeatPrevious("x/Bad", {.num_decks = 1, .k = 52}), rlm::EnvError);
  CHECK_THROWS_AS(RepeatPrevious("x/Bad", {.num_decks = 1, .k = 0}), rlm::EnvError);
}
