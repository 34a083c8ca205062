// State replays: popgym's get_state() recorded along trajectories by scripts/record_popgym_states.py
// (tests/data/popgym/states/<name>.json), compared with Env::write_state() after restore_golden() and every step.
// Floats are compared exactly after the float32 cast popgym also makes; only for envs whose steps draw nothing.
#pragma once
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "env_test_util.hpp"
#include "envs/registry.hpp"

namespace rlm::envs::test {

/// Replays every episode of states/<name>.json through a fresh unwrapped env of type E (which must provide
/// restore_golden(json, obs)) and checks write_state() against the recorded state at reset and after every step.
template <class E>
void check_state_replay(const std::string& name) {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  const auto path = std::filesystem::path(root ? root : ".") / "tests/data/popgym/states" / (name + ".json");
  std::ifstream in(path);
  if (!in) FAIL("state data " << path << " not found (set RLM_SOURCE_DIR to the repo root)");
  const auto data = nlohmann::json::parse(in);
  int episodes = 0;
  for (const auto& ep : data.at("episodes")) {
    auto env = make_env(data.at("canonical_id"), {.previous_action = false, .antialias = false, .flatten = false});
    auto* e = dynamic_cast<E*>(env.get());
    REQUIRE(e != nullptr);
    REQUIRE(e->state_space() != nullptr);
    const Space& state_space = *e->state_space();
    std::vector<float> obs(static_cast<size_t>(e->observation_space().raw_size()));
    std::vector<float> state(static_cast<size_t>(state_space.raw_size()));
    INFO(name << " seed " << ep.at("seed").get<int>() << " policy " << ep.at("policy").get<std::string>());
    e->restore_golden(ep.at("initial_state"), obs);
    const auto& states = ep.at("states");
    const auto& actions = ep.at("actions");
    REQUIRE(states.size() == actions.size() + 1);
    for (size_t t = 0; t < states.size(); ++t) {
      if (t > 0) e->step(actions[t - 1].get<std::vector<float>>(), obs);
      INFO("state after step " << t);
      e->write_state(state);
      REQUIRE(state_space.contains(state));
      const auto& want = states[t];
      REQUIRE(want.size() == state.size());
      for (size_t i = 0; i < state.size(); ++i) {
        INFO("component " << i);
        REQUIRE(state[i] == static_cast<float>(want[i].get<double>()));
      }
    }
    ++episodes;
  }
  CHECK(episodes >= 2);
}

/// popgym base_env_test test_spaces / test_np_random for the state: under random actions from reset(seed), the state
/// lies in state_space() at reset and after every step, and a replay of the same seed and actions gives the same
/// states. Returns the number of steps run.
inline int64_t check_states_random_episode(Env& env, uint64_t seed) {
  REQUIRE(env.state_space() != nullptr);
  const Space& space = *env.state_space();
  std::vector<std::vector<float>> states;
  auto record = [&] {
    std::vector<float> s(static_cast<size_t>(space.raw_size()));
    env.write_state(s);
    REQUIRE(space.contains(s));
    states.push_back(std::move(s));
  };
  const auto policy = random_policy(env.action_space(), seed + 7);
  const Episode ep = run_episode(
      env, seed,
      [&](const Episode& e) {
        record();  // the state before this step's action: the reset state first
        return policy(e);
      },
      env.max_episode_steps() + 1);
  record();  // after the last step
  REQUIRE(states.size() == ep.actions.size() + 1);
  const std::vector<std::vector<float>> first = std::move(states);
  states.clear();
  size_t t = 0;
  run_episode(
      env, seed,
      [&](const Episode&) {
        record();
        return ep.actions[t++];
      },
      static_cast<int64_t>(ep.actions.size()));
  record();
  REQUIRE(states == first);
  return ep.length();
}

}  // namespace rlm::envs::test
