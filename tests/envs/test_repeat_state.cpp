// RepeatFirst and RepeatPrevious state (popgym@410d5aa get_state): the layout against popgym along recorded
// trajectories (tests/data/popgym/states), the state in its space under random play, and its meaning.
#include <catch2/catch.hpp>
#include <vector>

#include "env_test_util.hpp"
#include "envs/popgym/repeat_first.hpp"
#include "envs/popgym/repeat_previous.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::RepeatFirst;
using rlm::envs::popgym::RepeatPrevious;

namespace {
const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
}

TEST_CASE("golden: RepeatFirst and RepeatPrevious write_state matches popgym get_state", "[golden][repeat_state]") {
  for (const char* level : {"Easy", "Medium", "Hard"}) {
    test::check_state_replay<RepeatFirst>(std::string("RepeatFirst") + level);
    test::check_state_replay<RepeatPrevious>(std::string("RepeatPrevious") + level);
  }
}

TEST_CASE("RepeatFirst state: target suit and the fraction of each suit still undealt", "[repeat_state]") {
  for (const char* id : {"popgym/RepeatFirstEasy", "popgym/RepeatFirstMedium", "popgym/RepeatFirstHard"}) {
    INFO(id);
    auto env = make_env(id, kRaw);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::tuple({Space::discrete(4), Space::box({0, 0, 0, 0}, {1, 1, 1, 1})}));
    const int per_suit = static_cast<int>(env->max_episode_steps() + 1) / 4;
    std::vector<float> obs(1), state(5);
    env->reset(2, obs);
    env->write_state(state);
    CHECK(state[0] == obs[0]);
    for (int s = 0; s < 4; ++s)
      CHECK(state[1 + static_cast<size_t>(s)] == static_cast<float>(s == obs[0] ? 1.0 - 1.0 / per_suit : 1.0));
    const float target = obs[0];
    for (int64_t t = 0; t < env->max_episode_steps(); ++t) env->step(std::vector<float>{0}, obs);
    env->write_state(state);
    CHECK(state == std::vector<float>{target, 0, 0, 0, 0});  // every card dealt
    CHECK(test::check_states_random_episode(*env, 3) == env->max_episode_steps());
  }
}

TEST_CASE("RepeatPrevious state: the last k suits, zero-padded, and the undealt fractions", "[repeat_state]") {
  for (const char* id : {"popgym/RepeatPreviousEasy", "popgym/RepeatPreviousMedium", "popgym/RepeatPreviousHard"}) {
    INFO(id);
    auto env = make_env(id, kRaw);
    const int k = dynamic_cast<const RepeatPrevious&>(*env).k();
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::tuple({Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(k), 4)),
                                               Space::box({0, 0, 0, 0}, {1, 1, 1, 1})}));
    std::vector<float> obs(1), state(static_cast<size_t>(k) + 4);
    env->reset(6, obs);
    std::vector<float> seen = {obs[0]};
    for (int64_t t = 0;; ++t) {
      env->write_state(state);
      // The window: the last min(k, seen) obs, oldest first, right-aligned after zeros.
      const size_t shown = std::min(seen.size(), static_cast<size_t>(k));
      for (size_t i = 0; i < static_cast<size_t>(k) - shown; ++i) REQUIRE(state[i] == 0.0f);
      for (size_t i = 0; i < shown; ++i)
        REQUIRE(state[static_cast<size_t>(k) - shown + i] == seen[seen.size() - shown + i]);
      if (t == env->max_episode_steps()) break;
      env->step(std::vector<float>{0}, obs);
      seen.push_back(obs[0]);
    }
    for (size_t s = 0; s < 4; ++s) CHECK(state[static_cast<size_t>(k) + s] == 0.0f);  // every card dealt
    CHECK(test::check_states_random_episode(*env, 3) == env->max_episode_steps());
  }
}
