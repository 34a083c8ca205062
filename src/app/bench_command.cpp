// `rlm bench [--quick] [--json FILE]`: end-to-end PPO throughput (env steps per second, rollout + update) on this
// machine for the learning-test config and the POPGym paper config. Timing lives here, never in tests.
#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agents/ppo.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/config.hpp"

namespace rlm::app {
namespace fs = std::filesystem;

int bench_command(const Args& args) {
  const auto parsed = parse_args(args, {"json", "iterations"}, {"quick"}, false);
  const bool quick = parsed.has("quick");
  const int iterations = parsed.has("iterations") ? std::stoi(*parsed.get("iterations")) : (quick ? 1 : 2);
  struct Case {
    std::string name, config;
  };
  const std::vector<Case> cases = {{"learning-test config (configs/gru_repeat_first.yaml)", "configs/gru_repeat_first.yaml"},
                                   {"POPGym paper config (configs/paper/gru_repeat_first_easy.yaml)",
                                    "configs/paper/gru_repeat_first_easy.yaml"}};
  nlohmann::json results = nlohmann::json::array();
  const fs::path scratch = fs::temp_directory_path() / fmt::format("rlm-bench-{}", ::getpid());
  fmt::print("{:<66} {:>10} {:>12} {:>14}\n", "PPO + GRU end-to-end (CPU)", "env steps", "seconds", "env steps/s");
  for (const auto& c : cases) {
    Config config = load_config(c.config, {"logging.tensorboard=false", "logging.console=false", "experiment.device=cpu"});
    // Stop after `iterations` iterations: every iteration collects at least num_envs * steps_per_env steps.
    config.algo.total_steps = static_cast<int64_t>(config.env.num_envs) * config.algo.steps_per_env * iterations;
    config.checkpoint.every = 1 << 30;
    const fs::path run_dir = scratch / fs::path(c.config).stem();
    fs::create_directories(run_dir);
    agents::PpoTrainer trainer(config, run_dir);
    const auto start = std::chrono::steady_clock::now();
    const auto summary = trainer.train();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double sps = summary.env_steps / seconds;
    fmt::print("{:<66} {:>10} {:>12.2f} {:>14.0f}\n", c.name, summary.env_steps, seconds, sps);
    results.push_back({{"case", c.name}, {"config", c.config}, {"env_steps", summary.env_steps},
                       {"iterations", summary.iterations}, {"seconds", seconds}, {"env_steps_per_second", sps},
                       {"torch_threads", config.experiment.torch_threads}});
  }
  fs::remove_all(scratch);
  if (auto json = parsed.get("json")) write_file_atomic(*json, results.dump(2) + "\n");
  return 0;
}

}  // namespace rlm::app
