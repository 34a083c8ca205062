// Golden replays: trajectories recorded from the reference package (popgym==1.0.7) by scripts/record_popgym.py,
// replayed through the C++ env from the same hidden state. Observations, rewards and flags must match (floats
// within 1e-5). An env that draws randomness inside step() receives the recorded draws through inject_draws().
#pragma once
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/registry.hpp"
#include "test_data.hpp"

namespace rlm::envs::test {

/// tests/data/popgym/<name>.json, e.g. name = "RepeatFirstEasy".
inline nlohmann::json load_golden(const std::string& name) { return load_test_data("popgym/" + name + ".json"); }

/// Replays every recorded episode of `name` through a fresh, unwrapped env of type E (which must provide
/// restore_golden(json, obs), and inject_draws(std::span<const double>) if its steps draw randomness).
template <class E>
void check_golden_replay(const std::string& name, double tolerance = 1e-5) {
  const auto data = load_golden(name);
  const std::string id = data.at("canonical_id");
  int episodes = 0;
  for (const auto& ep : data.at("episodes")) {
    auto env = make_env(id, {.previous_action = false, .antialias = false, .flatten = false});
    auto* e = dynamic_cast<E*>(env.get());
    REQUIRE(e != nullptr);
    const auto& space = e->observation_space();
    std::vector<float> obs(static_cast<size_t>(space.raw_size()));
    INFO(id << " seed " << ep.at("seed").get<int>() << " policy " << ep.at("policy").get<std::string>());
    e->restore_golden(ep.at("initial_state"), obs);
    auto check_obs = [&](const nlohmann::json& want, size_t t) {
      INFO("obs at step " << t);
      REQUIRE(want.size() == obs.size());
      for (size_t i = 0; i < obs.size(); ++i) REQUIRE(obs[i] == Approx(want[i].get<double>()).margin(tolerance));
    };
    check_obs(ep.at("obs")[0], 0);
    const auto& actions = ep.at("actions");
    for (size_t t = 0; t < actions.size(); ++t) {
      const auto action = actions[t].get<std::vector<float>>();
      if constexpr (requires { e->inject_draws(std::span<const double>{}); }) {
        const auto draws = ep.at("draws")[t].get<std::vector<double>>();
        e->inject_draws(draws);
      }
      const StepResult r = e->step(action, obs);
      INFO("step " << t + 1);
      CHECK(r.reward == Approx(ep.at("rewards")[t].get<double>()).margin(tolerance));
      REQUIRE(r.terminated == ep.at("terminated")[t].get<bool>());
      REQUIRE(r.truncated == ep.at("truncated")[t].get<bool>());
      check_obs(ep.at("obs")[t + 1], t + 1);
    }
    ++episodes;
  }
  CHECK(episodes >= 3);
}

}  // namespace rlm::envs::test
