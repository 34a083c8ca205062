// `rlm train --config FILE [overrides]` and `rlm train --resume RUN_DIR [overrides]`.
// Everything that can be wrong with the input (config, env id, sizes) is checked before the run folder exists, so
// a bad config leaves nothing behind.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <filesystem>

#include "agents/ppo.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/config.hpp"
#include "core/error.hpp"

namespace rlm::app {
namespace fs = std::filesystem;
namespace {

// Ctrl-C (SIGINT) or SIGTERM asks the trainer to stop after the current iteration and write a checkpoint; a second
// signal kills the process at once (the default action is restored by the first).
volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void request_stop(int signal) {
  g_stop_requested = 1;
  std::signal(signal, SIG_DFL);
}

agents::TrainSummary train_until_done_or_stopped(agents::PpoTrainer& trainer, const fs::path& run_dir) {
  g_stop_requested = 0;
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  const auto summary = trainer.train([] { return g_stop_requested != 0; });
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (summary.interrupted) {
    fmt::print("[train] stopped at {} env steps (iteration {}); checkpoint written. Continue with:\n"
               "  ./rlm train --resume {}\n",
               summary.env_steps, summary.iterations, run_dir.string());
  } else {
    fmt::print("[train] done: {} env steps in {} iterations, last mean return {:.4f}\n", summary.env_steps,
               summary.iterations, summary.last_return_mean);
  }
  return summary;
}

// runs/<name>/<UTC timestamp>, with a numeric suffix if two runs start in the same second.
fs::path new_run_dir(const Config& config) {
  const auto now = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
  const std::string stamp = fmt::format("{:%Y-%m-%dT%H-%M-%S}", now);
  fs::path dir = fs::path(config.experiment.runs_dir) / config.experiment.name / stamp;
  for (int i = 1; fs::exists(dir); ++i)
    dir = fs::path(config.experiment.runs_dir) / config.experiment.name / fmt::format("{}-{}", stamp, i);
  return dir;
}

}  // namespace

int train_command(const Args& args) {
  const auto parsed = parse_args(args, {"config", "resume"}, {}, /*allow_overrides=*/true);
  const auto config_file = parsed.get("config");
  const auto resume_dir = parsed.get("resume");
  if (config_file.has_value() == resume_dir.has_value())
    throw UsageError("train needs exactly one of --config FILE or --resume RUN_DIR");

  if (resume_dir) {
    const fs::path run_dir = *resume_dir;
    if (!fs::is_directory(run_dir)) throw UsageError(fmt::format("run folder '{}' not found", run_dir.string()));
    const Config config = load_config(run_dir / "config.yaml", parsed.overrides);
    agents::PpoTrainer trainer(config, run_dir);
    trainer.resume();
    if (!parsed.overrides.empty()) write_file_atomic(run_dir / "config.yaml", to_yaml(config));
    fmt::print("[train] resuming {}\n", run_dir.string());
    return train_until_done_or_stopped(trainer, run_dir).interrupted ? 130 : 0;
  }

  const Config config = load_config(*config_file, parsed.overrides);
  const fs::path run_dir = new_run_dir(config);
  agents::PpoTrainer trainer(config, run_dir);  // validates env, model and sizes before anything is written
  fs::create_directories(run_dir);
  write_file_atomic(run_dir / "config.yaml", to_yaml(config));
  fmt::print("[train] run folder {}\n", run_dir.string());
  if (train_until_done_or_stopped(trainer, run_dir).interrupted) return 130;
  fmt::print("[train] evaluate with: ./rlm eval --run {} --episodes 100\n", run_dir.string());
  return 0;
}

}  // namespace rlm::app
