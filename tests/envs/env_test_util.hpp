// Helpers shared by the env tests: drive one Env through an episode and record what it produced.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "envs/env.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::test {

/// One episode, as seen by the agent.
struct Episode {
  std::vector<std::vector<float>> obs;  ///< obs[0] from reset, obs[t] returned by step t
  std::vector<std::vector<float>> actions;
  std::vector<float> rewards;
  std::vector<uint8_t> terminated, truncated;
  double episode_return() const {
    double total = 0;
    for (float r : rewards) total += r;
    return total;
  }
  int64_t length() const { return static_cast<int64_t>(rewards.size()); }
};

/// A uniformly random valid raw action (Box parts uniform within finite bounds, clamped to [-1, 1]).
inline void random_action(const Space& space, Rng& rng, std::vector<float>& out) {
  switch (space.kind) {
    case Space::Kind::Discrete:
    case Space::Kind::MultiDiscrete:
      for (int64_t n : space.nvec) out.push_back(static_cast<float>(rng.uniform_int(static_cast<uint64_t>(n))));
      break;
    case Space::Kind::Box:
      for (size_t i = 0; i < space.low.size(); ++i)
        out.push_back(static_cast<float>(rng.uniform(std::max(space.low[i], -1.0f), std::min(space.high[i], 1.0f))));
      break;
    case Space::Kind::Tuple:
      for (const Space& p : space.parts) random_action(p, rng, out);
      break;
  }
}

/// Runs one episode from reset(seed) until terminated or truncated, or `max_steps` steps.
/// `policy(obs history so far)` returns the next raw action.
inline Episode run_episode(Env& env, uint64_t seed, const std::function<std::vector<float>(const Episode&)>& policy,
                           int64_t max_steps) {
  Episode ep;
  std::vector<float> obs(static_cast<size_t>(env.observation_space().raw_size()));
  env.reset(seed, obs);
  ep.obs.push_back(obs);
  for (int64_t t = 0; t < max_steps; ++t) {
    std::vector<float> action = policy(ep);
    const StepResult r = env.step(action, obs);
    ep.actions.push_back(std::move(action));
    ep.obs.push_back(obs);
    ep.rewards.push_back(r.reward);
    ep.terminated.push_back(r.terminated);
    ep.truncated.push_back(r.truncated);
    if (r.terminated || r.truncated) break;
  }
  return ep;
}

/// A policy drawing uniformly random valid actions from its own seeded stream.
inline std::function<std::vector<float>(const Episode&)> random_policy(const Space& action_space, uint64_t seed) {
  auto rng = std::make_shared<Rng>(seed);
  return [rng, &action_space](const Episode&) {
    std::vector<float> a;
    random_action(action_space, *rng, a);
    return a;
  };
}

}  // namespace rlm::envs::test
