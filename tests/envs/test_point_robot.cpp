// Point Robot (pomdp-baselines' meta-RL toy in VariBadWrapper with k = 2, original and SHM): the task sets and splits
// equal the papers' (meta_tasks_golden.json) and pomdp-baselines' own (meta_toys_golden.json, recorded from the
// reference code by scripts/record_pomdp_baselines.py), the dynamics and the sparse reward, the action mapping, the two
// inner episodes with their done_mdp flag and boundary quirk, the time limit and success.
// The recorded trajectories are replayed in test_golden_meta_toys.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "envs/meta/point_robot.hpp"
#include "envs/registry.hpp"
#include "test_data.hpp"

using rlm::envs::meta::PointRobot;

namespace {

nlohmann::json load(const std::string& name) { return rlm::envs::test::load_test_data("pomdp_baselines/" + name); }

std::vector<int> slice(const std::vector<int>& v, size_t from, size_t to) {
  return std::vector<int>(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to));
}

/// The action that moves by `delta` (|delta| ≤ 0.1 per axis): VariBadWrapper maps a ∈ [−1, 1] onto 0.1 a.
std::vector<float> move_by(double dx, double dy) {
  return {static_cast<float>(std::clamp(dx / 0.1, -1.0, 1.0)), static_cast<float>(std::clamp(dy / 0.1, -1.0, 1.0))};
}

}  // namespace

TEST_CASE("point robot: task sets and splits are the papers' and pomdp-baselines'", "[envs][point_robot]") {
  const auto papers = load("meta_tasks_golden.json");
  const auto recorded = load("meta_toys_golden.json");
  struct Case {
    std::string variant;
    int train_tasks;
    std::string recorded_key, papers_split;  // papers_split: a split of meta_tasks_golden.json, "" if none
  };
  for (const Case& c :
       {Case{"shm", 0, "point_robot_shm", "split_50_150"}, Case{"shm", 10, "point_robot_shm", "split_10_190"},
        Case{"original", 0, "point_robot_original", ""}}) {
    INFO(c.variant << " train_tasks " << c.train_tasks);
    const PointRobot train("meta/PointRobot", {.variant = c.variant, .train_tasks = c.train_tasks});
    const PointRobot eval("meta/PointRobot",
                          {.variant = c.variant, .train_tasks = c.train_tasks, .task_split = "eval"});
    // The goals and the learner's permutation, as pomdp-baselines' (or SHM's) constructor and learner draw them.
    // Goals within 1e-15: std::cos/sin and numpy's may differ in the last bit on another libm.
    const auto& want = recorded.at(c.recorded_key);
    REQUIRE(train.goals().size() == want.at("tasks").size());
    for (size_t i = 0; i < train.goals().size(); ++i) {
      CHECK(train.goals()[i][0] == Approx(want.at("tasks")[i][0].get<double>()).margin(1e-15));
      CHECK(train.goals()[i][1] == Approx(want.at("tasks")[i][1].get<double>()).margin(1e-15));
      CHECK(std::hypot(train.goals()[i][0], train.goals()[i][1]) == Approx(1.0));  // the upper unit semicircle
      CHECK(train.goals()[i][1] >= 0.0);
    }
    const auto perm = want.at("task_permutation").get<std::vector<int>>();
    const size_t n = perm.size(), n_train = c.train_tasks > 0 ? static_cast<size_t>(c.train_tasks)
                                                              : want.at("config").at("num_train_tasks").get<size_t>();
    CHECK(train.split_tasks() == slice(perm, 0, n_train));
    CHECK(eval.split_tasks() == slice(perm, n_train, n));
    if (c.train_tasks == 0) {  // the config's own split: eval = perm[-num_eval_tasks:]
      CHECK(eval.split_tasks() == slice(perm, n - want.at("config").at("num_eval_tasks").get<size_t>(), n));
    }
    if (!c.papers_split.empty()) {
      const auto& paper = papers.at("shm_point_robot_sparse_200");
      for (size_t i = 0; i < train.goals().size(); ++i) {
        CHECK(train.goals()[i][0] ==
              Approx(paper.at("goals_on_upper_unit_semicircle")[i][0].get<double>()).margin(1e-12));
        CHECK(train.goals()[i][1] ==
              Approx(paper.at("goals_on_upper_unit_semicircle")[i][1].get<double>()).margin(1e-12));
      }
      CHECK(train.split_tasks() == paper.at(c.papers_split).at("train").get<std::vector<int>>());
      CHECK(eval.split_tasks() == paper.at(c.papers_split).at("eval").get<std::vector<int>>());
    }
  }
  // Spot values of meta_tasks_golden.json.
  const PointRobot shm("meta/PointRobot", {.variant = "shm", .train_tasks = 10});
  CHECK(shm.goals()[33][0] == Approx(0.982461).margin(1e-6));
  CHECK(shm.goals()[33][1] == Approx(0.186468).margin(1e-6));
  CHECK(shm.goals()[194][0] == Approx(-0.977570).margin(1e-6));
  CHECK(shm.split_tasks() == std::vector<int>{33, 194, 175, 59, 170, 9, 54, 104, 18, 181});
}

TEST_CASE("point robot: the variants' sizes and spaces", "[envs][point_robot]") {
  const PointRobot shm("meta/PointRobot", {.variant = "shm"});
  CHECK(shm.inner_horizon() == 100);
  CHECK(shm.max_episode_steps() == 200);
  CHECK(shm.goal_radius() == 0.05);
  CHECK(shm.split_tasks().size() == 50);
  const PointRobot original("meta/PointRobot", {.variant = "original"});
  CHECK(original.inner_horizon() == 60);
  CHECK(original.max_episode_steps() == 120);
  CHECK(original.goal_radius() == 0.2);
  CHECK(original.split_tasks().size() == 80);
  CHECK(shm.observation_space().raw_size() == 3);  // x, y, done_mdp
  CHECK(shm.observation_space().low[2] == 0.0f);
  CHECK(shm.observation_space().high[2] == 1.0f);
  CHECK(shm.action_space() == rlm::envs::Space::box({-1, -1}, {1, 1}));
  CHECK(shm.reports_success());
  CHECK_THROWS(PointRobot("meta/PointRobot", {.variant = "varibad"}));
  CHECK_THROWS(PointRobot("meta/PointRobot", {.variant = "original", .train_tasks = 100}));
  CHECK_THROWS(PointRobot("meta/PointRobot", {.task_split = "test"}));
}

TEST_CASE("point robot: s <- s + a, the sparse reward, two inner episodes and the boundary obs",
          "[envs][point_robot]") {
  PointRobot env("meta/PointRobot", {.variant = "shm"});
  const auto g = env.goals()[33];
  const int64_t H = env.inner_horizon();
  std::vector<float> obs(3, 5.0f);
  const PointRobot::Point start = {g[0] - 0.5, g[1] - 0.3}, second = {-1.2, 1.4};
  env.reset_task(33, start, second, obs);
  CHECK(obs == std::vector<float>{static_cast<float>(start[0]), static_cast<float>(start[1]), 0.0f});
  // a ∈ [−1, 1] moves by the float32 value −0.1f + (a + 1)·0.5f·0.2f; beyond ±1 it is clipped; 0 stays put.
  auto r = env.step(std::vector<float>{1.0f, 0.0f}, obs);
  CHECK(env.state()[0] == start[0] + static_cast<double>(0.1f));
  CHECK(env.state()[1] == start[1]);
  CHECK(r.reward == 0.0f);
  r = env.step(std::vector<float>{-7.0f, 3.0f}, obs);
  CHECK(env.state()[0] == start[0] + static_cast<double>(0.1f) - static_cast<double>(0.1f));
  CHECK(env.state()[1] == start[1] + static_cast<double>(0.1f));
  CHECK(obs[0] == static_cast<float>(env.state()[0]));
  CHECK(obs[2] == 0.0f);
  // Steer onto the goal from what the obs shows, as an agent would, for the rest of both inner episodes.
  int rewarded_first = 0, rewarded_second = 0;
  PointRobot::Point terminal{};
  for (int64_t t = 2; t < 2 * H; ++t) {
    const auto a = move_by(g[0] - obs[0], g[1] - obs[1]);
    r = env.step(a, obs);
    (t < H ? rewarded_first : rewarded_second) += r.reward == 1.0f ? 1 : 0;
    CHECK(obs[2] == ((t + 1 == H || t + 1 == 2 * H) ? 1.0f : 0.0f));
    CHECK(r.truncated == (t + 1 == 2 * H));
    CHECK_FALSE(r.terminated);
    if (t + 1 == H) {
      // The boundary: the obs is the terminal state (flag 1), the env is already at the second start.
      terminal = {obs[0], obs[1]};
      CHECK(env.state() == second);
      CHECK(std::hypot(terminal[0] - g[0], terminal[1] - g[1]) <= 0.05 + 1e-6);
    }
    if (t == H) {
      // The first action of the second inner episode was chosen from the terminal obs (≈ 0, already at the goal)
      // but applied to the second start: the point barely moves from there.
      CHECK(std::abs(env.state()[0] - second[0]) < 0.01);
      CHECK(std::abs(env.state()[1] - second[1]) < 0.01);
    }
  }
  CHECK(rewarded_first > H / 2);
  CHECK(rewarded_second > 0);
  CHECK(r.success);
  CHECK_THROWS(env.step(std::vector<float>{0.0f, 0.0f}, obs));  // the episode is over
}

TEST_CASE("point robot: success is is_goal_state() after each step, as pomdp-baselines evaluates it",
          "[envs][point_robot]") {
  PointRobot env("meta/PointRobot", {.variant = "shm"});
  const auto g = env.goals()[33];
  const int64_t H = env.inner_horizon();
  std::vector<float> obs(3);
  const std::vector<float> still = {0.0f, 0.0f}, right = {1.0f, 0.0f}, away = {1.0f, 1.0f};
  const PointRobot::Point far = {-1.4, -0.4};
  {
    // The goal is reached only on the last step of the first inner episode: rewarded, but the success check after
    // that step reads the second start state, so no success.
    env.reset_task(33, {g[0] - 0.12, g[1]}, far, obs);
    float total = 0;
    for (int64_t t = 0; t < 2 * H; ++t) {
      const auto r = env.step(t + 1 == H ? right : still, obs);
      total += r.reward;
      if (t + 1 == H) CHECK(r.reward == 1.0f);
      if (t + 1 == 2 * H) CHECK_FALSE(r.success);
    }
    CHECK(total == 1.0f);
  }
  {
    // The second start lies on the goal and the agent leaves at once: no reward, but a success.
    env.reset_task(33, far, g, obs);
    float total = 0;
    for (int64_t t = 0; t < 2 * H; ++t) {
      const auto r = env.step(away, obs);
      total += r.reward;
      if (t + 1 == H) CHECK(env.is_goal_state());
      if (t + 1 == 2 * H) CHECK(r.success);
    }
    CHECK(total == 0.0f);
  }
  {
    // Starting on the goal and leaving at once: the state before the first step is never checked.
    env.reset_task(33, g, far, obs);
    CHECK(env.is_goal_state());
    rlm::envs::StepResult r;
    for (int64_t t = 0; t < 2 * H; ++t) r = env.step(away, obs);
    CHECK_FALSE(r.success);
  }
}

TEST_CASE("point robot: episodes draw their task from their split and fresh start states", "[envs][point_robot]") {
  for (const std::string split : {"train", "eval"}) {
    rlm::EnvOptions options;
    options.train_tasks = 10;
    options.task_split = split;
    auto env = rlm::envs::make_env("meta/PointRobot", {.flatten = false}, options);
    auto& robot = dynamic_cast<PointRobot&>(*env);
    const std::set<int> allowed(robot.split_tasks().begin(), robot.split_tasks().end());
    CHECK(allowed.size() == (split == "train" ? 10u : 190u));
    std::set<int> seen;
    std::vector<float> obs(3);
    for (uint64_t seed = 0; seed < 3000; ++seed) {
      env->reset(seed, obs);
      seen.insert(robot.task());
      REQUIRE(obs[0] >= -1.5f);
      REQUIRE(obs[0] <= 1.5f);
      REQUIRE(obs[1] >= -0.5f);
      REQUIRE(obs[1] <= 1.5f);
      REQUIRE(obs[2] == 0.0f);
    }
    CHECK(seen == allowed);  // every task of the split, and nothing else
  }
  // The second inner episode starts elsewhere, in the same range.
  PointRobot env("meta/PointRobot", {.variant = "original"});
  std::vector<float> obs(3);
  env.reset(7, obs);
  const PointRobot::Point first = env.state();
  for (int64_t t = 0; t < env.inner_horizon(); ++t) env.step(std::vector<float>{0.0f, 0.0f}, obs);
  CHECK(obs[0] == static_cast<float>(first[0]));  // the terminal obs: the point stood still
  CHECK(obs[2] == 1.0f);
  CHECK(env.state() != first);
  CHECK(std::abs(env.state()[0]) <= 1.5);
  CHECK(env.state()[1] >= -0.5);
  CHECK(env.state()[1] <= 1.5);
}
