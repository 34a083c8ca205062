// T-maze (Memory-RL envs/tmaze.py): golden replays of the reference's trajectories (scripts/record_memory_rl.py),
// the reward bounds ([−1, 1] passive, [−(Lc+1)/Lc, 1] active), the one-time oracle obs, success, and the goal draw.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "envs/memory_rl/tmaze.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"
#include "test_data.hpp"

using rlm::envs::memory_rl::TMaze;
using rlm::envs::memory_rl::TMazeConfig;

namespace {

nlohmann::json load(const std::string& name) { return rlm::envs::test::load_test_data("memory_rl/" + name + ".json"); }

float step(TMaze& env, int action, std::vector<float>& obs, bool* success = nullptr) {
  const float a = static_cast<float>(action);
  const auto r = env.step({&a, 1}, obs);
  if (success) *success = r.success;
  return r.reward;
}

}  // namespace

TEST_CASE("tmaze: replays Memory-RL's trajectories exactly", "[envs][tmaze]") {
  for (const std::string variant : {"Passive", "Active"}) {
    for (int length : {1, 4, 10}) {
      const auto data = load("TMaze" + variant + std::to_string(length));
      rlm::EnvOptions options;
      options.corridor_length = data.at("options").at("corridor_length");
      int goal_sides = 0, successes = 0;
      for (const auto& ep : data.at("episodes")) {
        INFO(variant << " Lc " << length << " seed " << ep.at("seed") << " policy " << ep.at("policy"));
        auto env = rlm::envs::make_env(data.at("canonical_id"), {.flatten = false}, options);
        auto* tmaze = dynamic_cast<TMaze*>(env.get());
        REQUIRE(tmaze != nullptr);
        std::vector<float> obs(2);
        tmaze->restore_golden(ep.at("initial_state"), obs);
        goal_sides |= tmaze->goal_y() == 1 ? 1 : 2;
        CHECK(obs == ep.at("obs")[0].get<std::vector<float>>());
        const auto& actions = ep.at("actions");
        REQUIRE(static_cast<int64_t>(actions.size()) == env->max_episode_steps());
        for (size_t t = 0; t < actions.size(); ++t) {
          INFO("step " << t + 1);
          const auto action = actions[t].get<std::vector<float>>();
          const auto r = env->step(action, obs);
          CHECK(r.reward == Approx(ep.at("rewards")[t].get<double>()).margin(1e-6));
          CHECK(r.terminated == ep.at("terminated")[t].get<bool>());
          CHECK(r.truncated == ep.at("truncated")[t].get<bool>());
          CHECK(r.success == ep.at("success")[t].get<bool>());
          CHECK(obs == ep.at("obs")[t + 1].get<std::vector<float>>());
          successes += r.success ? 1 : 0;
        }
      }
      CHECK(goal_sides == 3);  // both goal sides were replayed
      CHECK(successes >= 4);   // the optimal policy succeeded in every recorded episode
    }
  }
}

TEST_CASE("tmaze: returns span the reference's ranges, the optimal policy succeeds", "[envs][tmaze]") {
  const int lc = 7;
  for (int oracle : {0, 1}) {
    INFO("oracle length " << oracle);
    for (int goal : {-1, 1}) {
      TMaze env("test", {.corridor_length = lc, .oracle_length = oracle});
      std::vector<float> obs(2);
      env.restore_golden({{"goal_y", goal}}, obs);
      // Optimal: back to the oracle (active), then right to the junction, then turn towards the goal.
      double total = 0;
      bool success = false;
      for (int t = 0; t < oracle; ++t) total += step(env, 2, obs);
      CHECK(obs == std::vector<float>{0, static_cast<float>(goal)});
      for (int t = 0; t < lc + oracle; ++t) total += step(env, 0, obs);
      CHECK(obs == std::vector<float>{1, 0});
      total += step(env, goal == 1 ? 1 : 3, obs, &success);
      CHECK(total == Approx(1.0));
      CHECK(success);
      // Standing on the oracle cell the whole episode: every step but the last is penalised when behind.
      env.restore_golden({{"goal_y", goal}}, obs);
      total = 0;
      for (int64_t t = 0; t < env.max_episode_steps(); ++t) total += step(env, 2, obs, &success);
      CHECK(total == Approx(oracle == 0 ? -1.0 : -(lc + 1.0) / lc));
      CHECK_FALSE(success);
      CHECK(obs == std::vector<float>{0, 0});  // the goal was shown once only
    }
  }
}

TEST_CASE("tmaze: moves into walls are no-ops, stepping past the end is a misuse error", "[envs][tmaze]") {
  TMaze env("memory_rl/TMazePassive", {.corridor_length = 3});  // 4 steps
  std::vector<float> obs(2);
  env.restore_golden({{"goal_y", 1}}, obs);
  step(env, 1, obs);  // up from the corridor: a wall
  CHECK(env.y() == 0);
  step(env, 0, obs);
  step(env, 0, obs);
  CHECK(env.x() == 2);
  CHECK_THROWS(step(env, 4, obs));  // Discrete(4); an invalid action takes no step
  bool success = true;
  step(env, 0, obs, &success);  // the last step, at the junction without turning
  CHECK(env.x() == 3);
  CHECK_FALSE(success);
  CHECK_THROWS(step(env, 0, obs));  // the episode is over
}

TEST_CASE("tmaze: the goal side is drawn from the episode's seed, each side about half the time", "[envs][tmaze]") {
  rlm::envs::VecEnv vec("memory_rl/TMazePassive", 1, 1, 3);
  int up = 0;
  const int n = 2000;
  for (int e = 0; e < n; ++e) {
    vec.reset();
    up += vec.obs()[1] > 0 ? 1 : 0;  // the reset obs shows the goal side
  }
  CHECK(std::abs(up - n / 2) < 4 * std::sqrt(n / 4.0));  // within 4 sigma of a fair coin
  CHECK(vec.reports_success());
}
