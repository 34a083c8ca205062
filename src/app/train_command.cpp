// `rlm train --config FILE [overrides]` and `rlm train --resume RUN_DIR [overrides]`.
// Everything that can be wrong with the input (config, env id, sizes, resume overrides) is checked before anything
// is written, so a bad command leaves no run folder behind and never touches an existing one.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <memory>
#include <optional>

#include "agents/checkpoint.hpp"
#include "agents/experiment_config.hpp"
#include "agents/trainer.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "app/training.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/folders.hpp"
#include "core/resume_policy.hpp"
#include "core/run_lock.hpp"
#include "core/run_output.hpp"
#include "core/stop_signal.hpp"

namespace rlm::app {
namespace fs = std::filesystem;
namespace {

/// 0 when training finished, else the shell's exit status for the signal that stopped it (130 SIGINT, 143 SIGTERM).
/// The stop handlers were installed when the command started (core/stop_signal.hpp); a signal that came while the
/// trainer was being built stops it at its first check.
int train_until_done_or_stopped(agents::Trainer& trainer, const fs::path& run_dir) {
  // The thread count the trainer set (experiment.torch_threads; 0: this process's share of the CPUs).
  fmt::print(run_output(), "[train] {} torch thread(s)\n", torch::get_num_threads());
  const auto summary = trainer.train([] { return stop_signal() != 0; });
  const int signal = stop_signal();
  // The handlers stay: a signal now (the sweep's forwarded copy of one that came as training ended) finds the run
  // finished and changes nothing.
  if (summary.interrupted) {
    fmt::print(run_output(),
               "[train] stopped at {} env steps (iteration {}); the newest checkpoint is kept. Continue with:\n"
               "  ./rlm train --resume {}\n",
               summary.env_steps, summary.iterations, run_dir.string());
    return 128 + (signal != 0 ? signal : SIGINT);
  }
  fmt::print(run_output(), "[train] done: {} env steps in {} iterations, last mean return {:.4f}\n", summary.env_steps,
             summary.iterations, summary.last_return_mean);
  return 0;
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

/// Builds the trainer algo.type names; a value only it can judge (env id, device, max_seq_len, action space) is
/// reported where it was set.
std::unique_ptr<agents::Trainer> make_trainer(const Config& config, const fs::path& run_dir,
                                              const ConfigOrigins& origins, const std::string& source) {
  return with_config_locations(origins, source, [&] { return agents::make_trainer(config, run_dir); });
}

void report_leftovers(const fs::path& run_dir) {
  if (const int removed = agents::remove_interrupted_writes(run_dir); removed > 0)
    fmt::print(run_output(), "[train] removed {} temp file(s) of writes interrupted in an earlier process\n", removed);
}

}  // namespace

void require_run_folder(const fs::path& run_dir, const std::string& flag) {
  std::error_code ec;
  if (fs::is_directory(run_dir, ec)) return;
  if (!fs::exists(run_dir, ec)) throw UsageError(fmt::format("{}: run folder '{}' not found", flag, run_dir.string()));
  const fs::path parent = run_dir.parent_path();
  if (parent.filename() == "checkpoints" && fs::exists(parent.parent_path() / "config.yaml", ec))
    throw UsageError(
        fmt::format("{}: '{}' is a checkpoint file; {} takes its run folder, '{}' (its newest valid "
                    "checkpoint is used{})",
                    flag, run_dir.string(), flag, parent.parent_path().string(),
                    flag == "--run" ? ", or pick one with --checkpoint FILE" : ""));
  throw UsageError(fmt::format("{}: '{}' is a file, not a run folder", flag, run_dir.string()));
}

int resume_run(const fs::path& run_dir, const std::vector<std::string>& overrides, const RunFolderLock* held) {
  require_run_folder(run_dir, "--resume");
  // Before anything in the folder is read for writing or written.
  std::optional<RunFolderLock> lock;
  if (held == nullptr) lock.emplace(run_dir);
  const fs::path config_file = run_dir / "config.yaml";
  const Config saved = load_config(config_file);
  ConfigOrigins origins;
  const Config config = load_config(config_file, overrides, &origins);
  check_resume_changes(config_values(saved), config_values(config), origins);
  auto trainer = make_trainer(config, run_dir, origins, config_file.string());
  report_leftovers(run_dir);
  const auto report = trainer->resume();
  for (const auto& [path, reason] : report.skipped) {
    fmt::print(run_output(), "[train] skipped checkpoint {}: {}\n", path.filename().string(), reason);
  }
  // Only now that the checkpoint has loaded: a refused or failed resume leaves the run's config as it was.
  if (!overrides.empty()) write_file_atomic(config_file, to_yaml(config));
  fmt::print(run_output(), "[train] resuming {} from {}\n", run_dir.string(), report.checkpoint.filename().string());
  return train_until_done_or_stopped(*trainer, run_dir);
}

namespace {

/// Writes the config and trains; `run_dir` exists and is locked.
int train_in_locked_folder(const Config& config, agents::Trainer& trainer, const fs::path& run_dir) {
  write_file_atomic(run_dir / "config.yaml", to_yaml(config));
  fmt::print(run_output(), "[train] run folder {}\n", run_dir.string());
  if (const int status = train_until_done_or_stopped(trainer, run_dir); status != 0) return status;
  fmt::print(run_output(), "[train] evaluate with: ./rlm eval --run {} --episodes 100\n", run_dir.string());
  return 0;
}

}  // namespace

int train_new_run(const std::string& config_file, const std::vector<std::string>& overrides,
                  const std::optional<fs::path>& run_dir_or_new) {
  ConfigOrigins origins;
  const Config config = load_config(config_file, overrides, &origins);
  const fs::path run_dir = run_dir_or_new ? *run_dir_or_new : new_run_dir(config);
  // Validates env, model and sizes before anything is written.
  auto trainer = make_trainer(config, run_dir, origins, config_file);
  std::error_code ec;
  if (run_dir_or_new && fs::exists(run_dir, ec))
    throw UsageError(fmt::format("run folder '{}' already exists", run_dir.string()));
  create_folders(run_dir, "run folder");
  const RunFolderLock lock(run_dir);
  return train_in_locked_folder(config, *trainer, run_dir);
}

int train_new_run_in(const std::string& config_file, const std::vector<std::string>& overrides, const fs::path& run_dir,
                     const RunFolderLock& /*held*/) {
  ConfigOrigins origins;
  const Config config = load_config(config_file, overrides, &origins);
  auto trainer = make_trainer(config, run_dir, origins, config_file);
  return train_in_locked_folder(config, *trainer, run_dir);
}

int train_command(const Args& args) {
  const auto parsed = parse_args(args, {"config", "resume"}, {}, /*allow_overrides=*/true);
  const auto config_file = parsed.get("config");
  const auto resume_dir = parsed.get("resume");
  if (config_file.has_value() == resume_dir.has_value())
    throw UsageError("train needs exactly one of --config FILE or --resume RUN_DIR");
  if (resume_dir) return resume_run(*resume_dir, parsed.overrides);
  return train_new_run(*config_file, parsed.overrides, std::nullopt);
}

}  // namespace rlm::app
