// The meta-RL envs' per-step info (goal state, task id) and task pinning, which the off-policy trainer uses for
// pomdp-baselines' replay terminal flags and its evaluation of every held-out task once.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "envs/meta/point_robot.hpp"
#include "envs/meta/wind.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"

using rlm::envs::meta::PointRobot;
using rlm::envs::meta::Wind;

namespace {

std::unique_ptr<rlm::envs::Env> make_meta(const std::string& id, const std::string& split) {
  rlm::EnvOptions options;
  options.task_split = split;
  return rlm::envs::make_env(id, {.flatten = false}, options);
}

}  // namespace

TEST_CASE("meta envs: every step reports the episode's task and whether it ends in a goal state", "[envs][meta_info]") {
  SECTION("point robot: goal_state is is_goal_state() after the wrapper's step") {
    PointRobot env("meta/PointRobot", {.variant = "original"});
    std::vector<float> obs(3);
    const int task = env.split_tasks()[3];
    const auto g = env.goals()[static_cast<size_t>(task)];
    // Start 0.15 left of the goal (radius 0.2): inside; step right twice (0.1 each) to leave it.
    env.reset_task(task, {g[0] - 0.15, g[1]}, {-1.4, -0.4}, obs);
    int goal_steps = 0;
    for (int64_t t = 0; t < env.max_episode_steps(); ++t) {
      const auto r = env.step(std::vector<float>{t < 3 ? 1.0f : 0.0f, 0.0f}, obs);
      CHECK(r.task == task);
      CHECK(r.goal_state == env.is_goal_state());
      goal_steps += r.goal_state ? 1 : 0;
    }
    // Inside after the first step (−0.05), the second (+0.05) and the third (+0.15), then standing there, until
    // step H, after which the state is already the far second start (the reference's check reads it).
    CHECK(goal_steps == env.inner_horizon() - 1);
  }
  SECTION("wind: goal_state is the rewarded goal test") {
    Wind env("meta/Wind", {.variant = "original"});
    std::vector<float> obs(2);
    const int task = env.split_tasks()[5];
    env.reset_task(task, obs);
    for (int64_t t = 0; t < env.max_episode_steps(); ++t) {
      const auto r = env.step(std::vector<float>{0.3f, 1.0f}, obs);
      CHECK(r.task == task);
      CHECK(r.goal_state == (r.reward == 1.0f));
    }
  }
  SECTION("envs without tasks report none") {
    auto env = rlm::envs::make_env("popgym/RepeatFirstEasy", {.flatten = true});
    std::vector<float> obs(static_cast<size_t>(env->observation_space().raw_size()));
    env->reset(1, obs);
    const auto r = env->step(std::vector<float>{0.0f}, obs);
    CHECK(r.task == -1);
    CHECK_FALSE(r.goal_state);
    CHECK_FALSE(env->reports_goal_state());
    CHECK(env->split_size() == 0);
    CHECK_THROWS_AS(env->pin_task(0), rlm::EnvError);
  }
}

TEST_CASE("meta envs: a pinned task replaces the drawn one and changes nothing else", "[envs][meta_info]") {
  for (const std::string id : {"meta/PointRobot", "meta/Wind"}) {
    for (const std::string split : {"train", "eval"}) {
      INFO(id << " " << split);
      auto pinned = make_meta(id, split);
      auto drawn = make_meta(id, split);
      REQUIRE(pinned->reports_goal_state());
      const int n = pinned->split_size();
      REQUIRE(n > 0);
      std::vector<float> obs_pinned(static_cast<size_t>(pinned->observation_space().raw_size()));
      std::vector<float> obs_drawn(obs_pinned.size());
      const std::vector<float> action = {0.2f, -0.1f};
      std::set<int> tasks;
      for (int index = 0; index < n; ++index) {
        pinned->pin_task(index);
        pinned->reset(100 + static_cast<uint64_t>(index), obs_pinned);
        drawn->reset(100 + static_cast<uint64_t>(index), obs_drawn);
        CHECK(obs_pinned == obs_drawn);  // the same start state: pinning leaves the episode's other draws alone
        const auto r = pinned->step(action, obs_pinned);
        tasks.insert(r.task);
      }
      CHECK(static_cast<int>(tasks.size()) == n);  // split index i is the split's i-th task: all of them once
      // Unpinned again: episodes draw from the split.
      pinned->pin_task(-1);
      std::set<int> drawn_tasks;
      for (uint64_t seed = 0; seed < 40; ++seed) {
        pinned->reset(seed, obs_pinned);
        drawn_tasks.insert(pinned->step(action, obs_pinned).task);
      }
      CHECK(drawn_tasks.size() > 1);
      for (const int t : drawn_tasks) CHECK(tasks.contains(t));
      CHECK_THROWS_AS(pinned->pin_task(n), rlm::EnvError);
      CHECK_THROWS_AS(pinned->pin_task(-2), rlm::EnvError);
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
  auto wind = make_meta("meta/Wind", "eval");
  const auto& split = dynamic_cast<const Wind&>(*wind).split_tasks();
  CHECK(envs.tasks()[0] == split[4]);
  CHECK(envs.tasks()[2] == split[7]);
  CHECK(envs.tasks()[1] >= 0);
  for (int i = 0; i < 3; ++i) CHECK_FALSE(envs.goal_states()[static_cast<size_t>(i)]);  // (0, 0) is far from (0, 1)
}
