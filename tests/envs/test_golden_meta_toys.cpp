// Golden replays of pomdp-baselines' meta-RL toys, Wind and Point Robot, original and SHM: trajectories recorded from
// the reference code itself (pomdp-baselines' and SHM's envs/meta/toy_navigation in their VariBadWrapper, built as
// their learner builds them; scripts/record_pomdp_baselines.py -> tests/data/pomdp_baselines/meta_toys_golden.json)
// and replayed through the C++ envs from the same task and start states.
// Exact, no tolerance: the state is float64 in both, the action mapping float32 in both (numpy on the policy's
// float32 action and the env's float32 bounds), so env.state() must equal the reference's float64 obs bit for bit and
// our float32 obs its float32 rounding; rewards, done flags and the per-step is_goal_state() are compared as they are.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "envs/meta/point_robot.hpp"
#include "envs/meta/wind.hpp"
#include "test_data.hpp"

using rlm::envs::meta::PointRobot;
using rlm::envs::meta::Wind;

namespace {

const nlohmann::json& golden() {
  static const nlohmann::json data = rlm::envs::test::load_test_data("pomdp_baselines/meta_toys_golden.json");
  return data;
}

/// The recorded obs as our env writes it: each float64 rounded to float32.
std::vector<float> as_float(const nlohmann::json& v) {
  std::vector<float> out;
  for (const auto& x : v) out.push_back(static_cast<float>(x.get<double>()));
  return out;
}

}  // namespace

TEST_CASE("golden: Wind replays pomdp-baselines' and SHM's WindEnv", "[golden][wind]") {
  for (const std::string variant : {"original", "shm"}) {
    const auto& data = golden().at("wind_" + variant);
    Wind env("meta/Wind", {.variant = variant});
    CHECK(env.max_episode_steps() == data.at("max_episode_steps").get<int64_t>());
    CHECK(env.goal_radius() == data.at("goal_radius").get<double>());
    REQUIRE(env.winds().size() == data.at("tasks").size());
    for (size_t i = 0; i < env.winds().size(); ++i) {
      CHECK(env.winds()[i][0] == data.at("tasks")[i][0].get<double>());
      CHECK(env.winds()[i][1] == data.at("tasks")[i][1].get<double>());
    }
    for (const auto& traj : data.at("trajectories")) {
      INFO(variant << " task " << traj.at("task") << " policy " << traj.at("policy").get<std::string>());
      std::vector<float> obs(2);
      env.reset_task(traj.at("task").get<int>(), obs);
      CHECK(obs == as_float(traj.at("obs")[0]));
      bool any_goal = false;
      const auto& actions = traj.at("actions");
      for (size_t t = 0; t < actions.size(); ++t) {
        INFO("step " << t + 1);
        const auto r = env.step(actions[t].get<std::vector<float>>(), obs);
        const auto& want = traj.at("obs")[t + 1];
        REQUIRE(env.state()[0] == want[0].get<double>());
        REQUIRE(env.state()[1] == want[1].get<double>());
        REQUIRE(obs == as_float(want));
        CHECK(r.reward == traj.at("reward")[t].get<float>());
        CHECK(r.truncated == (traj.at("done")[t].get<int>() == 1));
        CHECK_FALSE(r.terminated);
        any_goal = any_goal || traj.at("goal")[t].get<int>() == 1;
        if (r.truncated) CHECK(r.success == any_goal);
      }
    }
  }
}

TEST_CASE("golden: Point Robot replays pomdp-baselines' and SHM's SparsePointEnv in VariBadWrapper",
          "[golden][point_robot]") {
  for (const std::string variant : {"original", "shm"}) {
    const auto& data = golden().at("point_robot_" + variant);
    PointRobot env("meta/PointRobot", {.variant = variant});
    CHECK(env.inner_horizon() == data.at("max_episode_steps").get<int64_t>());
    CHECK(env.max_episode_steps() == data.at("horizon_bamdp").get<int64_t>());
    CHECK(env.goal_radius() == data.at("goal_radius").get<double>());
    for (const auto& traj : data.at("trajectories")) {
      INFO(variant << " task " << traj.at("task") << " policy " << traj.at("policy").get<std::string>());
      // The start states the reference drew from numpy's global generator: the reset obs and info["start_state"].
      const auto& starts = traj.at("start_state");
      REQUIRE(starts.size() == 1);
      const size_t boundary = std::stoul(starts.begin().key());
      CHECK(boundary == static_cast<size_t>(env.inner_horizon()));
      const auto& o0 = traj.at("obs")[0];
      const auto& s1 = starts.front();
      std::vector<float> obs(3);
      env.reset_task(traj.at("task").get<int>(), {o0[0].get<double>(), o0[1].get<double>()},
                     {s1[0].get<double>(), s1[1].get<double>()}, obs);
      CHECK(obs == as_float(o0));
      bool any_goal = false;
      int64_t rewards = 0;
      const auto& actions = traj.at("actions");
      REQUIRE(actions.size() == static_cast<size_t>(env.max_episode_steps()));
      for (size_t t = 0; t < actions.size(); ++t) {
        INFO("step " << t + 1);
        const auto r = env.step(actions[t].get<std::vector<float>>(), obs);
        const auto& want = traj.at("obs")[t + 1];
        // At the boundary the obs is the terminal state while the env already stands on the second start.
        const auto& state = t + 1 == boundary ? s1 : want;
        REQUIRE(env.state()[0] == state[0].get<double>());
        REQUIRE(env.state()[1] == state[1].get<double>());
        REQUIRE(obs == as_float(want));
        CHECK(obs[2] == static_cast<float>(traj.at("done_mdp")[t].get<int>()));
        CHECK(r.reward == traj.at("reward")[t].get<float>());
        CHECK(r.truncated == (traj.at("done")[t].get<int>() == 1));
        CHECK_FALSE(r.terminated);
        CHECK(env.is_goal_state() == (traj.at("goal")[t].get<int>() == 1));
        any_goal = any_goal || traj.at("goal")[t].get<int>() == 1;
        rewards += r.reward == 1.0f ? 1 : 0;
        if (r.truncated) CHECK(r.success == any_goal);
      }
      INFO("return " << rewards);
    }
  }
}
