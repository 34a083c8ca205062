// Wind (pomdp-baselines' meta-RL toy, original and SHM): the task sets and splits equal the papers'
// (meta_tasks_golden.json), the dynamics and the sparse reward, the action mapping, the time limit and success.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "envs/meta/wind.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"
#include "test_data.hpp"

using rlm::envs::meta::Wind;

namespace {

nlohmann::json golden() { return rlm::envs::test::load_test_data("pomdp_baselines/meta_tasks_golden.json"); }

}  // namespace

TEST_CASE("wind: task sets and splits are the papers'", "[envs][wind]") {
  const auto data = golden();
  struct Case {
    std::string variant, key, split;
    int train_tasks;
  };
  for (const Case& c : {Case{"shm", "shm_wind_200", "split_50_150", 0}, Case{"shm", "shm_wind_200", "split_10_190", 10},
                        Case{"original", "pomdp_baselines_wind_60", "split_40_20", 0}}) {
    INFO(c.variant << " " << c.split);
    const auto& want = data.at(c.key);
    const Wind train("meta/Wind", {.variant = c.variant, .train_tasks = c.train_tasks, .task_split = "train"});
    const Wind eval("meta/Wind", {.variant = c.variant, .train_tasks = c.train_tasks, .task_split = "eval"});
    REQUIRE(train.winds().size() == want.at("winds").size());
    for (size_t i = 0; i < train.winds().size(); ++i) {
      CHECK(train.winds()[i][0] == Approx(want.at("winds")[i][0].get<double>()).margin(1e-15));
      CHECK(train.winds()[i][1] == Approx(want.at("winds")[i][1].get<double>()).margin(1e-15));
    }
    CHECK(train.split_tasks() == want.at(c.split).at("train").get<std::vector<int>>());
    CHECK(eval.split_tasks() == want.at(c.split).at("eval").get<std::vector<int>>());
  }
}

TEST_CASE("wind: s <- s + a + w, reward 1 inside the goal radius, success, the time limit", "[envs][wind]") {
  Wind env("meta/Wind", {.variant = "shm"});
  std::vector<float> obs(2, 5.0f);
  env.reset_task(67, obs);  // w = (0.027202, -0.088318) (meta_tasks_golden.json)
  CHECK(obs == std::vector<float>{0, 0});
  const auto w = env.winds()[67];
  // Policy actions in [-1, 1] map to 0.1 a; beyond ±1 they are clipped.
  const std::vector<float> up = {0.0f, 1.0f}, far = {-7.0f, 3.0f};
  auto r = env.step(up, obs);
  CHECK(env.state()[0] == Approx(w[0]));
  CHECK(env.state()[1] == Approx(0.1 + w[1]));
  CHECK(r.reward == 0.0f);
  r = env.step(far, obs);
  CHECK(env.state()[0] == Approx(2 * w[0] - 0.1));
  CHECK(env.state()[1] == Approx(0.2 + 2 * w[1]));
  CHECK(obs[0] == static_cast<float>(env.state()[0]));
  // Steer onto the goal (0, 1): a = (goal - s - w) / 0.1 while it is within reach, then a = -w / 0.1 to hover.
  bool success = false;
  int rewarded = 0;
  int64_t first_reward = -1;
  for (int64_t t = 2; t < env.max_episode_steps(); ++t) {
    std::vector<float> a(2);
    for (size_t i = 0; i < 2; ++i) {
      const double target = i == 0 ? 0.0 : 1.0;
      a[i] = static_cast<float>(std::clamp((target - env.state()[i] - w[i]) / 0.1, -1.0, 1.0));
    }
    r = env.step(a, obs);
    rewarded += r.reward == 1.0f ? 1 : 0;
    if (r.reward == 1.0f && first_reward < 0) first_reward = t;
    CHECK(r.truncated == (t + 1 == env.max_episode_steps()));
    CHECK_FALSE(r.terminated);
    success = r.success;
  }
  // Against this task's wind (w_y = -0.088) the point climbs 0.012 per step at most: it reaches the goal late, then
  // hovers there to the end, rewarded on every step.
  REQUIRE(first_reward > 0);
  CHECK(rewarded == env.max_episode_steps() - first_reward);
  CHECK(success);
  CHECK_THROWS(env.step(up, obs));  // the episode is over
}

TEST_CASE("wind: episodes draw their task from their split only", "[envs][wind]") {
  for (const std::string split : {"train", "eval"}) {
    rlm::EnvOptions options;
    options.train_tasks = 10;
    options.task_split = split;
    auto env = rlm::envs::make_env("meta/Wind", {.flatten = false}, options);
    auto& wind = dynamic_cast<Wind&>(*env);
    const std::set<int> allowed(wind.split_tasks().begin(), wind.split_tasks().end());
    CHECK(allowed.size() == (split == "train" ? 10u : 190u));
    std::set<int> seen;
    std::vector<float> obs(2);
    for (uint64_t seed = 0; seed < 3000; ++seed) {
      env->reset(seed, obs);
      seen.insert(wind.task());
    }
    CHECK(seen == allowed);  // every task of the split, and nothing else
  }
}
