// VecEnv: seeding contract (trajectories depend on (seed, env index, episode index) only), bitwise equality across
// thread counts, auto-reset with final_obs, episode counters for resuming, and error propagation from workers.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/seed.hpp"
#include "env_test_util.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"

using namespace rlm::envs;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
const WrapperOptions kPaper{.previous_action = true, .antialias = true, .flatten = true};

/// Everything a VecEnv produced over a run.
struct Record {
  std::vector<float> obs, final_obs_on_done, rewards;
  std::vector<uint8_t> terminated, truncated;
  std::vector<uint64_t> counters;
  bool operator==(const Record&) const = default;
};

std::vector<float> random_actions(const VecEnv& vec, Rng& rng) {
  std::vector<float> actions;
  for (int i = 0; i < vec.num_envs(); ++i) test::random_action(vec.action_space(), rng, actions);
  return actions;
}

Record run(const std::string& id, int num_envs, int num_threads, const WrapperOptions& options, int steps) {
  VecEnv vec(id, num_envs, num_threads, 2024, options);
  Rng rng(5);
  Record rec;
  vec.reset();
  const auto d = static_cast<size_t>(vec.obs_size());
  for (int t = 0; t < steps; ++t) {
    vec.step(random_actions(vec, rng));
    rec.obs.insert(rec.obs.end(), vec.obs().begin(), vec.obs().end());
    rec.rewards.insert(rec.rewards.end(), vec.rewards().begin(), vec.rewards().end());
    rec.terminated.insert(rec.terminated.end(), vec.terminated().begin(), vec.terminated().end());
    rec.truncated.insert(rec.truncated.end(), vec.truncated().begin(), vec.truncated().end());
    for (size_t i = 0; i < static_cast<size_t>(num_envs); ++i)
      if (vec.terminated()[i] || vec.truncated()[i])
        rec.final_obs_on_done.insert(rec.final_obs_on_done.end(),
                                     vec.final_obs().begin() + static_cast<ptrdiff_t>(i * d),
                                     vec.final_obs().begin() + static_cast<ptrdiff_t>((i + 1) * d));
  }
  rec.counters = vec.episode_counters();
  return rec;
}

}  // namespace

TEST_CASE("VecEnv output is bitwise identical for 1, 2 and 3 threads", "[vec_env]") {
  for (const char* id : {"popgym/RepeatFirstEasy", "popgym/RepeatPreviousEasy", "popgym/PositionOnlyCartPoleEasy"}) {
    for (const WrapperOptions& options : {kRaw, kPaper}) {
      INFO(id);
      const Record one = run(id, 7, 1, options, 300);
      CHECK(one == run(id, 7, 2, options, 300));
      CHECK(one == run(id, 7, 3, options, 300));
      CHECK(one == run(id, 7, 16, options, 300));  // capped at num_envs
      // 300 steps cover several auto-resets.
      for (uint64_t c : one.counters) CHECK(c >= 2);
    }
  }
}

TEST_CASE("VecEnv matches single envs seeded derive_seed(seed, {kEnvStream, i, k}), final_obs included", "[vec_env]") {
  const std::string id = "popgym/PositionOnlyCartPoleEasy";
  constexpr int kEnvs = 4;
  constexpr uint64_t kSeed = 77;
  VecEnv vec(id, kEnvs, 2, kSeed, kPaper);
  const auto d = static_cast<size_t>(vec.obs_size());
  std::vector<std::unique_ptr<Env>> single;
  std::vector<std::vector<float>> single_obs(kEnvs, std::vector<float>(d));
  std::vector<uint64_t> episode(kEnvs, 0);
  for (int i = 0; i < kEnvs; ++i) {
    single.push_back(make_env(id, kPaper));
    single[static_cast<size_t>(i)]->reset(rlm::derive_seed(kSeed, {rlm::kEnvStream, static_cast<uint64_t>(i), 0}),
                                          single_obs[static_cast<size_t>(i)]);
  }
  vec.reset();
  CHECK(vec.episode_counters() == std::vector<uint64_t>(kEnvs, 1));
  Rng rng(1);
  int done_count = 0;
  for (int t = 0; t < 400; ++t) {
    for (size_t i = 0; i < kEnvs; ++i)
      REQUIRE(
          std::equal(single_obs[i].begin(), single_obs[i].end(), vec.obs().begin() + static_cast<ptrdiff_t>(i * d)));
    const std::vector<float> actions = random_actions(vec, rng);
    vec.step(actions);
    for (size_t i = 0; i < kEnvs; ++i) {
      const StepResult r = single[i]->step(std::span<const float>(actions).subspan(i, 1), single_obs[i]);
      REQUIRE(vec.rewards()[i] == r.reward);
      REQUIRE(vec.terminated()[i] == r.terminated);
      REQUIRE(vec.truncated()[i] == r.truncated);
      if (r.terminated || r.truncated) {
        ++done_count;
        REQUIRE(std::equal(single_obs[i].begin(), single_obs[i].end(),
                           vec.final_obs().begin() + static_cast<ptrdiff_t>(i * d)));
        single[i]->reset(rlm::derive_seed(kSeed, {rlm::kEnvStream, i, ++episode[i]}), single_obs[i]);
        // The reset obs of the paper pipeline carries is_t0 = 1 (last two floats [0, 1]).
        REQUIRE(vec.obs()[i * d + d - 1] == 1.0f);
      }
    }
  }
  CHECK(done_count > 8);
  for (size_t i = 0; i < kEnvs; ++i) CHECK(vec.episode_counters()[i] == episode[i] + 1);
}

TEST_CASE("VecEnv episode counters: all envs restart together on RepeatFirst", "[vec_env]") {
  VecEnv vec("popgym/RepeatFirstEasy", 3, 1, 9, kRaw);
  vec.reset();
  std::vector<float> zeros(3, 0.0f);
  for (int t = 1; t <= 51; ++t) {
    vec.step(zeros);
    for (int i = 0; i < 3; ++i) REQUIRE(bool(vec.terminated()[static_cast<size_t>(i)]) == (t == 51));
  }
  CHECK(vec.episode_counters() == std::vector<uint64_t>{2, 2, 2});
  vec.reset();  // an explicit reset starts yet another episode
  CHECK(vec.episode_counters() == std::vector<uint64_t>{3, 3, 3});
}

TEST_CASE("VecEnv set_episode_counters reproduces a trajectory when resuming", "[vec_env]") {
  // A deterministic obs-driven policy makes each episode a function of its seed alone, so run B, resumed at run
  // A's counters, must replay the episodes that run A played next, in every env.
  const std::string id = "popgym/PositionOnlyCartPoleEasy";
  constexpr int kEnvs = 5;
  auto policy = [](const VecEnv& vec) {
    std::vector<float> actions;
    for (int i = 0; i < vec.num_envs(); ++i)
      actions.push_back(vec.obs()[static_cast<size_t>(i) * 2 + 1] > 0 ? 1.0f : 0.0f);
    return actions;
  };
  using Trace = std::vector<std::vector<float>>;  // per env: the obs of its next episode
  auto trace_next_episode = [&](VecEnv& vec) {
    Trace trace(kEnvs);
    std::vector<bool> done(kEnvs, false);
    for (int i = 0; i < kEnvs; ++i) trace[i].assign(vec.obs().begin() + i * 2, vec.obs().begin() + i * 2 + 2);
    while (std::find(done.begin(), done.end(), false) != done.end()) {
      vec.step(policy(vec));
      for (size_t i = 0; i < kEnvs; ++i) {
        if (done[i]) continue;
        const bool end = vec.terminated()[i] || vec.truncated()[i];
        const float* row = end ? vec.final_obs().data() + i * 2 : vec.obs().data() + i * 2;
        trace[i].insert(trace[i].end(), row, row + 2);
        done[i] = end;
      }
    }
    return trace;
  };

  VecEnv a(id, kEnvs, 2, 31, kRaw);
  a.reset();
  Rng rng(2);
  for (int t = 0; t < 137; ++t) a.step(random_actions(a, rng));
  const std::vector<uint64_t> saved = a.episode_counters();
  a.reset();  // A abandons its current episodes and starts episodes saved[i]
  const Trace from_a = trace_next_episode(a);

  VecEnv b(id, kEnvs, 1, 31, kRaw);
  b.set_episode_counters(saved);
  b.reset();
  CHECK(trace_next_episode(b) == from_a);

  VecEnv c(id, kEnvs, 1, 31, kRaw);  // without the counters: other episodes
  c.reset();
  CHECK(trace_next_episode(c) != from_a);
  CHECK_THROWS_AS(c.set_episode_counters({1, 2}), rlm::EnvError);
}

TEST_CASE("VecEnv rethrows an env's exception from a worker thread and stays usable", "[vec_env]") {
  for (int bad_row : {0, 7}) {  // chunk 0 runs on the caller, chunk 1 on the worker
    VecEnv vec("popgym/RepeatFirstHard", 8, 2, 1, kPaper);
    vec.reset();
    std::vector<float> actions(8, 1.0f);
    actions[static_cast<size_t>(bad_row)] = 7.0f;
    INFO("bad row " << bad_row);
    CHECK_THROWS_WITH(vec.step(actions), "popgym-RepeatFirstHard-v0: invalid action 7 for action space Discrete(4)");
    CHECK_THROWS_AS(vec.step(std::vector<float>(8, 1.0f)), rlm::EnvError);  // needs reset() after a failure
    vec.reset();
    for (int t = 0; t < 10; ++t) vec.step(std::vector<float>(8, 1.0f));
    CHECK(vec.rewards()[0] != 0.0f);
  }
}

TEST_CASE("VecEnv checks its arguments", "[vec_env]") {
  CHECK_THROWS_AS(VecEnv("popgym/RepeatFirstEasy", 0, 1, 0), rlm::EnvError);
  CHECK_THROWS_AS(VecEnv("popgym/RepeatFirstEasy", 2, 0, 0), rlm::EnvError);
  CHECK_THROWS_AS(VecEnv("popgym/RepeatFirstEsy", 2, 1, 0), rlm::EnvError);
  VecEnv vec("popgym-RepeatFirstEasy-v0", 4, 2, 0);
  CHECK(vec.id() == "popgym/RepeatFirstEasy");
  CHECK(vec.obs_size() == 4);  // flatten is on by default
  CHECK(vec.action_size() == 1);
  CHECK(vec.obs().size() == 16);
  CHECK(vec.max_episode_steps() == 51);
  CHECK_THROWS_AS(vec.step(std::vector<float>(4, 0.0f)), rlm::EnvError);  // before reset
  vec.reset();
  CHECK_THROWS_AS(vec.step(std::vector<float>(3, 0.0f)), rlm::EnvError);  // wrong size
}

TEST_CASE("VecEnv from a factory steps the envs the factory builds", "[vec_env]") {
  // The same envs through the registry string and through a factory with custom options: identical batches.
  rlm::EnvOptions options;
  options.corridor_length = 4;
  VecEnv by_id("memory_rl/TMazePassive", 6, 2, 11, {}, options);
  VecEnv by_factory([&] { return make_env("memory_rl/TMazePassive", {}, options); }, 6, 2, 11);
  CHECK(by_factory.max_episode_steps() == 5);
  by_id.reset();
  by_factory.reset();
  std::vector<float> actions(6, 0.0f);
  for (int t = 0; t < 12; ++t) {
    CHECK(std::vector<float>(by_id.obs().begin(), by_id.obs().end()) ==
          std::vector<float>(by_factory.obs().begin(), by_factory.obs().end()));
    CHECK(std::vector<float>(by_id.rewards().begin(), by_id.rewards().end()) ==
          std::vector<float>(by_factory.rewards().begin(), by_factory.rewards().end()));
    by_id.step(actions);
    by_factory.step(actions);
  }
}

TEST_CASE("VecEnv rejects a factory whose envs disagree on their spaces", "[vec_env]") {
  int built = 0;
  auto factory = [&built] {
    rlm::EnvOptions options;
    options.corridor_length = built++ == 0 ? 4 : 5;  // env 0 differs from the rest in episode length
    return make_env("memory_rl/TMazePassive", {}, options);
  };
  CHECK_THROWS_WITH(VecEnv(factory, 3, 1, 0), Catch::Contains("other spaces or episode length than env 0"));
}
