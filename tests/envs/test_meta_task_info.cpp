// The meta-RL envs' TaskSplitEnv interface (goal state, task id, task pinning), which the off-policy trainer uses for
// pomdp-baselines' replay terminal flags and its evaluation of every held-out task once, found under wrappers and
// passed through VecEnv.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "envs/env_extensions.hpp"
#include "envs/meta/point_robot.hpp"
#include "envs/meta/wind.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"

using rlm::envs::find_extension;
using rlm::envs::TaskSplitEnv;
using rlm::envs::meta::PointRobot;
using rlm::envs::meta::Wind;

namespace {

std::unique_ptr<rlm::envs::Env> make_meta(const std::string& id, const std::string& split) {
  rlm::EnvOptions options;
  options.task_split = split;
  // Under every wrapper a config can stack, so that the tests find the interface through them.
  return rlm::envs::make_env(id, {.previous_action = true, .antialias = true, .flatten = true}, options);
}

}  // namespace

TEST_CASE("meta envs: after every step, the episode's task and whether the state is a goal state",
          "[envs][meta_info]") {
  SECTION("point robot: is_goal_state() after the VariBad wrapper's step") {
    PointRobot env("meta/PointRobot", {.variant = "original"});
    std::vector<float> obs(3);
    const int task = env.split_tasks()[3];
    const auto g = env.goals()[static_cast<size_t>(task)];
    // Start 0.15 left of the goal (radius 0.2): inside; step right twice (0.1 each) to leave it.
    env.reset_task(task, {g[0] - 0.15, g[1]}, {-1.4, -0.4}, obs);
    int goal_steps = 0;
    for (int64_t t = 0; t < env.max_episode_steps(); ++t) {
      env.step(std::vector<float>{t < 3 ? 1.0f : 0.0f, 0.0f}, obs);
      CHECK(env.task() == task);
      goal_steps += env.is_goal_state() ? 1 : 0;
    }
    // Inside after the first step (−0.05), the second (+0.05) and the third (+0.15), then standing there, until
    // step H, after which the state is already the far second start (the reference's check reads it).
    CHECK(goal_steps == env.inner_horizon() - 1);
  }
  SECTION("wind: is_goal_state() is the rewarded goal test") {
    Wind env("meta/Wind", {.variant = "original"});
    std::vector<float> obs(2);
    const int task = env.split_tasks()[5];
    env.reset_task(task, obs);
    for (int64_t t = 0; t < env.max_episode_steps(); ++t) {
      const auto r = env.step(std::vector<float>{0.3f, 1.0f}, obs);
      CHECK(env.task() == task);
      CHECK(env.is_goal_state() == (r.reward == 1.0f));
    }
  }
  SECTION("envs without tasks have no task split") {
    auto env = rlm::envs::make_env("popgym/RepeatFirstEasy", {.previous_action = true, .antialias = true});
    CHECK(find_extension<TaskSplitEnv>(*env) == nullptr);
    rlm::envs::VecEnv envs("popgym/RepeatFirstEasy", 2, 1, 3);
    CHECK_FALSE(envs.reports_goal_state());
    CHECK(envs.split_size() == 0);
    envs.reset();
    envs.step(std::vector<float>{0.0f, 1.0f});
    CHECK(envs.tasks()[0] == -1);
    CHECK_FALSE(envs.goal_states()[1]);
    try {
      envs.pin_task(1, 0);
      FAIL("no exception");
    } catch (const rlm::EnvError& e) {
      CHECK(std::string(e.what()) == "popgym-RepeatFirstEasy-v0: pin_task(0) needs an env with a task split");
    }
  }
}

TEST_CASE("meta envs: a pinned task replaces the drawn one and changes nothing else", "[envs][meta_info]") {
  for (const std::string id : {"meta/PointRobot", "meta/Wind"}) {
    for (const std::string split : {"train", "eval"}) {
      INFO(id << " " << split);
      auto pinned = make_meta(id, split);
      auto drawn = make_meta(id, split);
      TaskSplitEnv* tasks_of_pinned = find_extension<TaskSplitEnv>(*pinned);
      REQUIRE(tasks_of_pinned != nullptr);
      const int n = tasks_of_pinned->split_size();
      REQUIRE(n > 0);
      std::vector<float> obs_pinned(static_cast<size_t>(pinned->observation_space().raw_size()));
      std::vector<float> obs_drawn(obs_pinned.size());
      const std::vector<float> action = {0.2f, -0.1f};
      std::set<int> tasks;
      for (int index = 0; index < n; ++index) {
        tasks_of_pinned->pin_task(index);
        pinned->reset(100 + static_cast<uint64_t>(index), obs_pinned);
        drawn->reset(100 + static_cast<uint64_t>(index), obs_drawn);
        CHECK(obs_pinned == obs_drawn);  // the same start state: pinning leaves the episode's other draws alone
        pinned->step(action, obs_pinned);
        tasks.insert(tasks_of_pinned->task());
      }
      CHECK(static_cast<int>(tasks.size()) == n);  // split index i is the split's i-th task: all of them once
      // Unpinned again: episodes draw from the split.
      tasks_of_pinned->pin_task(-1);
      std::set<int> drawn_tasks;
      for (uint64_t seed = 0; seed < 40; ++seed) {
        pinned->reset(seed, obs_pinned);
        drawn_tasks.insert(tasks_of_pinned->task());
      }
      CHECK(drawn_tasks.size() > 1);
      for (const int t : drawn_tasks) CHECK(tasks.contains(t));
      CHECK_THROWS_AS(tasks_of_pinned->pin_task(n), rlm::EnvError);
      CHECK_THROWS_AS(tasks_of_pinned->pin_task(-2), rlm::EnvError);
    }
  }
}

TEST_CASE("meta envs: VecEnv passes goal states and tasks through and pins per env", "[envs][meta_info]") {
  rlm::EnvOptions options;
  options.task_split = "eval";
  rlm::envs::VecEnv envs("meta/Wind", 3, 1, 9, {}, options);  // the SHM variant: 150 held-out tasks
  CHECK(envs.reports_goal_state());
  CHECK(envs.split_size() == 150);
  envs.pin_task(0, 4);
  envs.pin_task(2, 7);
  envs.reset();
  const std::vector<float> actions(6, 0.0f);
  envs.step(actions);
  const Wind wind("meta/Wind", {.task_split = "eval"});
  const auto& split = wind.split_tasks();
  CHECK(envs.tasks()[0] == split[4]);
  CHECK(envs.tasks()[2] == split[7]);
  CHECK(envs.tasks()[1] >= 0);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(envs.goal_states()[static_cast<size_t>(i)]);  // (0, 0) is far from (0, 1)
}
