// The conformance suite of popgym tests/base_env_test.py and gymnasium check_env (popgym@410d5aa tests/test_envs.py),
// run over every registered id and every wrapper configuration the trainer uses.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/registry.hpp"

using namespace rlm::envs;

namespace {

struct NamedOptions {
  const char* name;
  WrapperOptions options;
};

const NamedOptions kConfigs[] = {
    {"raw", {.previous_action = false, .antialias = false, .flatten = false}},
    {"flatten", {}},
    {"prev_action+antialias raw", {.previous_action = true, .antialias = true, .flatten = false}},
    {"paper", {.previous_action = true, .antialias = true, .flatten = true}},
};

/// Replays `actions` from reset(seed).
test::Episode replay(Env& env, uint64_t seed, const std::vector<std::vector<float>>& actions) {
  size_t t = 0;
  return test::run_episode(
      env, seed, [&](const test::Episode&) { return actions.at(t++); }, static_cast<int64_t>(actions.size()));
}

}  // namespace

TEST_CASE("every registered env conforms", "[conformance][slow]") {
  const std::vector<std::string> ids = registered_env_ids();
  // POPGym; the two T-mazes, Best-Arm, Wind, Point Robot, the two VMs, Key-to-Door; 4 Box2D tasks × {full, -P, -V}
  REQUIRE(ids.size() == 48 + 8 + 12);
  for (const std::string& id : ids) {
    for (const NamedOptions& config : kConfigs) {
      INFO(id << " with " << config.name);
      auto env = make_env(id, config.options);
      CHECK(env->id() == id);
      const int64_t max_steps = env->max_episode_steps();
      REQUIRE(max_steps > 0);

      // A random episode ends within max_episode_steps, every obs in the space, truncated false after step 1.
      for (uint64_t seed : {0ull, 1ull, 123ull}) {
        const test::Episode ep =
            test::run_episode(*env, seed, test::random_policy(env->action_space(), seed + 100), max_steps + 1);
        REQUIRE(ep.length() <= max_steps);
        REQUIRE((ep.terminated.back() || ep.truncated.back()));
        if (max_steps > 1) REQUIRE(ep.truncated.front() == 0);
        for (const auto& o : ep.obs) REQUIRE(env->observation_space().contains(o));
        for (const auto& a : ep.actions) REQUIRE(env->action_space().contains(a));
        for (size_t t = 0; t + 1 < ep.rewards.size(); ++t) REQUIRE_FALSE((ep.terminated[t] || ep.truncated[t]));
        for (float r : ep.rewards) REQUIRE(std::isfinite(r));

        // Same seed and actions: bit-identical replay, also after other episodes ran in between.
        const test::Episode again = replay(*env, seed, ep.actions);
        REQUIRE(again.obs == ep.obs);
        REQUIRE(again.rewards == ep.rewards);
        REQUIRE(again.terminated == ep.terminated);
        REQUIRE(again.truncated == ep.truncated);

        // Other seeds give other trajectories. Several tries, with other actions too: an env with few distinct
        // episodes repeats one now and then (the active T-maze shows its goal only to an agent that steps back).
        bool differs = false;
        for (uint64_t k = 0; k < 10 && !differs; ++k) {
          const test::Episode other = test::run_episode(
              *env, seed + 1000 + k, test::random_policy(env->action_space(), seed + 100 + k), max_steps);
          differs = other.obs != ep.obs;
        }
        CHECK(differs);
      }

      // A fresh env and a reused one agree on the reset obs of a seed (check_env's reset determinism).
      auto fresh = make_env(id, config.options);
      std::vector<float> a(static_cast<size_t>(env->observation_space().raw_size()));
      std::vector<float> b(a.size());
      env->reset(456, a);
      fresh->reset(456, b);
      CHECK(a == b);
    }
  }
}

TEST_CASE("stepping before reset is an EnvError, not undefined behaviour", "[conformance]") {
  for (const std::string& id : registered_env_ids()) {
    for (const NamedOptions& config : kConfigs) {
      INFO(id << " with " << config.name);
      auto env = make_env(id, config.options);
      std::vector<float> obs(static_cast<size_t>(env->observation_space().raw_size()));
      // A valid action (a 1-element {0} is no action of a MultiDiscrete space: it would throw for that reason).
      const std::vector<float> action = test::random_policy(env->action_space(), 7)(test::Episode{});
      REQUIRE(env->action_space().contains(action));
      try {
        env->step(action, obs);
        FAIL("step() before reset() did not throw");
      } catch (const rlm::EnvError& e) {
        CHECK_THAT(e.what(), Catch::Contains("before"));
      }
    }
  }
}
