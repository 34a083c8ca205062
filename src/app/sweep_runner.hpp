// Running a sweep's runs, for `rlm sweep` and `rlm reproduce`: every run is an ordinary run folder,
// <dir>/runs/<id>, trained by a child `rlm <child_command> --only I` whose output goes to <dir>/logs/<id>.log; the
// same --only I is what Slurm array task I runs. A run with done.json is finished and skipped; one with a checkpoint
// is resumed from it; one without (it died before its first checkpoint) starts again. A run that fails leaves
// failed.json with its error. A worker takes its run folder's lock before it looks inside, so a folder that another
// process trains (a second sweep on the same folder) is never deleted or written: that run is reported as in use.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "app/arguments.hpp"
#include "sweep/sweep_spec.hpp"

namespace rlm::app {

struct SweepJob {
  sweep::SweepSpec spec;
  std::vector<sweep::SweepRun> runs;
  std::filesystem::path dir;  ///< the sweep's folder: runs/, logs/, sweep.json, results
  /// The arguments (after the executable) that rebuild this same job in a child, "--only I" appended per run.
  std::vector<std::string> child_command;
};

/// The flags every sweep-running command takes, besides its own.
inline const std::vector<std::string> kRunnerFlags = {"jobs", "only", "runs-per-gpu", "partition", "time",
                                                      "gpus", "cpus", "mem",          "account",   "concurrency"};
inline const std::vector<std::string> kRunnerSwitches = {"dry-run", "rerun-changed", "in-process"};
/// A worker's exit status when another process holds its run's folder (EX_TEMPFAIL): the run is left alone.
inline constexpr int kExitRunInUse = 75;

/// Takes `--emit slurm DIR` (two values) out of `raw`; the rest is parsed as usual.
Args split_emit(const Args& raw, std::optional<std::filesystem::path>& emit_dir);
/// The sbatch flags (--partition, --time, --gpus, --cpus, --mem, --account, --concurrency) over the sweep file's.
void apply_slurm_flags(const ParsedArgs& parsed, sweep::SlurmOptions& slurm);
/// A non-negative count flag, or nullopt; a UsageError for anything else.
std::optional<int> count_flag(const ParsedArgs& parsed, const char* name);

/// --only I (one run, in this process), --emit slurm DIR, --dry-run, or every run (--only A-B: runs A to B) with local
/// workers: --jobs N at a time (default: the usable CPUs over the runs' largest experiment.torch_threads, 0 counting
/// as 1), or --runs-per-gpu N, N on each visible GPU, each worker seeing only its own through CUDA_VISIBLE_DEVICES.
/// Each worker is told how many run at once (core/cpu_share.hpp), so that torch_threads 0 takes its share of the
/// CPUs. --in-process: the workers are threads of this process instead (app/thread_workers.hpp), which needs the runs
/// to agree on experiment.torch_threads and cpu_matmul. With --emit slurm and --runs-per-gpu N, array task i trains N
/// runs on each of its GPUs at once (`--only A-B`, with --in-process when given). Every run's config is loaded before
/// anything starts, and runs already trained with other values than the sweep file now gives are refused
/// (--rerun-changed: trained again from scratch). Returns the exit status: 0 when every run finished, 1 when some
/// failed, 128 + signal when interrupted.
int run_sweep_job(const SweepJob& job, const ParsedArgs& parsed, const std::optional<std::filesystem::path>& emit_dir);

/// The GPUs that --runs-per-gpu places workers on, as values of CUDA_VISIBLE_DEVICES: the entries of this process's
/// CUDA_VISIBLE_DEVICES when it is set (as Slurm sets it for a job's GPUs), else every device CUDA sees, by index.
std::vector<std::string> visible_gpus();

/// "rlm train --config FILE key=value ..." for a run (dry runs, messages).
std::string train_command_line(const sweep::SweepRun& run);

}  // namespace rlm::app
