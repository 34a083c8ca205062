// `rlm bench sac [--quick] [--updates N] [--threads K] [--pomdp-baselines PATH] [--json FILE]`: gradient updates per
// second of the recurrent off-policy trainers per memory backend, at pomdp-baselines' default batch (32 windows of
// 200 steps, embeddings 8/32/8, memory width 128, MLPs [128, 128]; configs/pomdp/{cartpole,pendulum}/v/rnn.yml), and
// the replay buffer's sampling throughput. With --pomdp-baselines PATH (a checkout of twni2016/pomdp-baselines) the
// reference's own update is timed in the same run on the same shapes (scripts/bench_pomdp_baselines.py, torch of the
// project venv), and the table shows ours ÷ theirs. Timing lives here, never in tests.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "agents/experiment_config.hpp"
#include "agents/off_policy.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "app/source_dir.hpp"
#include "app/subprocess.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace rlm::app {
namespace fs = std::filesystem;
namespace {

struct Case {
  std::string algo, memory, env;
  int64_t obs_dim, action_dim;
};

Config bench_config(const Case& c, int threads) {
  Config config;
  config.experiment.device = "cpu";
  config.experiment.torch_threads = threads;
  config.env.id = c.env;
  config.env.num_envs = 1;
  config.env.previous_action = false;
  config.env.antialias = false;
  config.model.memory.type = c.memory;
  config.model.memory.hidden_size = 128;
  config.model.memory.shm.output_size = 128;
  config.model.off_policy.action_embedding_size = 8;
  config.model.off_policy.observation_embedding_size = 32;
  config.model.off_policy.reward_embedding_size = 8;
  config.model.off_policy.actor_layers = {128, 128};
  config.model.off_policy.critic_layers = {128, 128};
  config.algo.type = c.algo;
  config.algo.off_policy.batch_size = 32;
  config.algo.off_policy.sampled_seq_len = 200;
  config.algo.off_policy.gamma = 0.9;
  config.logging.console = false;
  config.logging.tensorboard = false;
  return config;
}

/// Synthetic 200-step episodes with the env's shapes (the update's cost depends on shapes only), as the reference
/// benchmark builds its batches.
void fill_replay(agents::OffPolicyTrainer& trainer, const Case& c, int episodes) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const int64_t length = 200;
  std::vector<float> obs((length + 1) * c.obs_dim), actions(length * trainer.action_spec().action_size()),
      rewards(length);
  for (int e = 0; e < episodes; ++e) {
    for (auto& x : obs) x = unit(rng);
    for (auto& a : actions)
      a = c.algo == "sacd" ? static_cast<float>(rng() % static_cast<uint64_t>(c.action_dim)) : unit(rng);
    for (auto& r : rewards) r = unit(rng);
    trainer.replay().add_episode(obs, actions, rewards, e % 3 == 0);
  }
}

std::optional<double> reference_updates_per_second(const fs::path& repo, const Case& c, int threads, int updates) {
  const char* python = std::getenv("RLM_PYTHON");
  const fs::path out = fs::temp_directory_path() / fmt::format("rlm-bench-sac-ref-{}.json", ::getpid());
  const std::vector<std::string> command = {python ? python : "python3",
                                            (source_dir() / "scripts" / "bench_pomdp_baselines.py").string(),
                                            "--repo",
                                            repo.string(),
                                            "--algo",
                                            c.algo,
                                            "--seq-model",
                                            "gru",
                                            "--obs-dim",
                                            std::to_string(c.obs_dim),
                                            "--action-dim",
                                            std::to_string(c.action_dim),
                                            "--updates",
                                            std::to_string(updates),
                                            "--warmup",
                                            "3",
                                            "--threads",
                                            std::to_string(threads),
                                            "--json",
                                            out.string()};
  if (run_and_wait(command, {.discard_stdout = true, .discard_stderr = true}) != 0) return std::nullopt;
  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  fs::remove(out);
  if (j.is_discarded() || !j.contains("updates_per_second")) return std::nullopt;
  return j.at("updates_per_second").get<double>();
}

}  // namespace

int sac_bench_command(const Args& args) {
  const auto parsed = parse_args(args, {"json", "updates", "threads", "pomdp-baselines"}, {"quick"}, false);
  const bool quick = parsed.has("quick");
  const auto number = [&](const char* flag, int64_t fallback, int64_t max) {
    const auto text = parsed.get(flag);
    if (!text) return fallback;
    const auto n = parse_integer(*text);
    if (!n || *n < 1 || *n > max)
      throw UsageError(fmt::format("--{} must be an integer from 1 to {}, got '{}'", flag, max, *text));
    return *n;
  };
  const int64_t updates = number("updates", quick ? 5 : 30, 100000);
  const int threads = static_cast<int>(number("threads", 1, 1024));
  const auto reference = parsed.get("pomdp-baselines");
  if (reference && !fs::is_directory(*reference))
    throw UsageError(
        fmt::format("--pomdp-baselines '{}' is not a folder (a checkout of twni2016/pomdp-baselines)", *reference));

  // RepeatPreviousEasy: one-hot obs of 4, 4 actions (SAC-D); PositionOnlyPendulumEasy: obs 2, one Box action (SAC).
  std::vector<Case> cases;
  for (const char* memory : {"gru", "ffm", "shm", "kf", "spiking", "stm"})
    cases.push_back({"sacd", memory, "popgym/RepeatPreviousEasy", 4, 4});
  cases.push_back({"sac", "gru", "popgym/PositionOnlyPendulumEasy", 2, 1});
  cases.push_back({"td3", "gru", "popgym/PositionOnlyPendulumEasy", 2, 1});
  if (quick) cases.resize(1);

  const fs::path scratch = fs::temp_directory_path() / fmt::format("rlm-bench-sac-{}", ::getpid());
  nlohmann::json results = nlohmann::json::array();
  fmt::print(
      "Recurrent off-policy updates, batch 32 x 200 steps, memory 128, MLPs [128, 128], {} torch thread(s), CPU\n",
      threads);
  fmt::print("{:<6} {:<8} {:>12} {:>12} {:>14} {:>14} {:>8}\n", "algo", "memory", "updates/s", "ms/update", "sample ms",
             "reference/s", "ratio");
  for (const Case& c : cases) {
    const Config config = bench_config(c, threads);
    fs::create_directories(scratch);
    agents::OffPolicyTrainer trainer(config, scratch);
    fill_replay(trainer, c, 64);
    const auto generator = at::detail::createCPUGenerator(1);
    for (int i = 0; i < 2; ++i) trainer.update(trainer.sample_batch(i), generator);  // warm-up (allocator, caches)
    double sample_seconds = 0;
    const auto start = std::chrono::steady_clock::now();
    // Up to `updates` updates, but a slow backend (STM loops over time) stops after 20 s and at least 3 updates.
    int64_t done = 0;
    for (int64_t i = 0; i < updates; ++i, ++done) {
      if (i >= 3 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > 20.0) break;
      const auto t0 = std::chrono::steady_clock::now();
      const auto batch = trainer.sample_batch(i);
      sample_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      trainer.update(batch, generator);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double ours = static_cast<double>(done) / seconds;
    std::optional<double> theirs;
    if (reference && c.memory == "gru" && c.algo != "td3")
      theirs = reference_updates_per_second(*reference, c, threads, static_cast<int>(std::min<int64_t>(updates, 30)));
    fmt::print("{:<6} {:<8} {:>12.2f} {:>12.1f} {:>14.2f} {:>14} {:>8}\n", c.algo, c.memory, ours, 1000.0 / ours,
               1000.0 * sample_seconds / static_cast<double>(done), theirs ? fmt::format("{:.2f}", *theirs) : "-",
               theirs ? fmt::format("{:.2f}x", ours / *theirs) : "-");
    nlohmann::json row = {{"algo", c.algo},
                          {"memory", c.memory},
                          {"env", c.env},
                          {"batch_size", 32},
                          {"seq_len", 200},
                          {"torch_threads", threads},
                          {"updates", updates},
                          {"updates_per_second", ours},
                          {"sample_ms", 1000.0 * sample_seconds / static_cast<double>(updates)}};
    if (theirs) row["reference_updates_per_second"] = *theirs, row["ratio"] = ours / *theirs;
    results.push_back(row);
    fs::remove_all(scratch);
  }
  if (auto json = parsed.get("json")) write_file_atomic(*json, results.dump(2) + "\n");
  return 0;
}

}  // namespace rlm::app
