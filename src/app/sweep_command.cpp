// `rlm sweep --config SWEEP.yaml`: trains every run of a sweep file (sweep/sweep_spec.hpp) with N local workers, or
// emits a Slurm job array of the same runs (app/sweep_runner.hpp), or collects their results (--collect).
#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "app/sweep_runner.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "sweep/sweep_collect.hpp"
#include "sweep/sweep_spec.hpp"

namespace rlm::app {
namespace fs = std::filesystem;
namespace {

// ---- collect ----
int collect(const sweep::SweepSpec& spec, const std::vector<sweep::SweepRun>& runs, const fs::path& sweep_dir,
            const std::string& metric) {
  std::error_code ec;
  if (!fs::is_directory(sweep_dir, ec))
    throw UsageError(
        fmt::format("--collect: sweep folder '{}' does not exist; run the sweep first (the same command "
                    "without --collect)",
                    sweep_dir.string()));
  const auto results = sweep::collect_runs(sweep_dir, runs, metric);
  for (const auto& r : results)
    if (r.status == "corrupt") fmt::print("[sweep] left out {}: {}\n", r.run.id, r.problem);
  const auto groups = sweep::group_results(results);
  write_file_atomic(sweep_dir / "results.csv", sweep::groups_csv(groups));
  write_file_atomic(sweep_dir / "results.md", sweep::groups_markdown(groups));
  write_file_atomic(sweep_dir / "runs.csv", sweep::runs_csv(results));
  int finished = 0;
  for (const auto& r : results) finished += r.status == "finished" ? 1 : 0;
  fmt::print("{}", sweep::groups_markdown(groups));
  fmt::print("[sweep] {}: {} of {} runs finished; wrote {}/results.csv, results.md and runs.csv\n", spec.name, finished,
             runs.size(), sweep_dir.string());
  return 0;
}

}  // namespace

int sweep_command(const Args& raw_args) {
  std::optional<fs::path> emit_dir;
  const Args args = split_emit(raw_args, emit_dir);
  std::vector<std::string> flags = kRunnerFlags, switches = kRunnerSwitches;
  flags.insert(flags.end(), {"config", "out", "metric"});
  switches.emplace_back("collect");
  const auto parsed = parse_args(args, flags, switches, /*allow_overrides=*/false);
  const auto file = parsed.get("config");
  if (!file) throw UsageError("sweep needs --config SWEEP.yaml");
  SweepJob job;
  job.spec = sweep::load_sweep(*file);
  apply_slurm_flags(parsed, job.spec.slurm);
  job.runs = sweep::expand(job.spec);
  job.dir = parsed.get("out") ? fs::path(*parsed.get("out")) : fs::path("runs/sweeps") / job.spec.name;
  job.child_command = {"sweep", "--config", fs::absolute(*file).lexically_normal().string(), "--out",
                       fs::absolute(job.dir).lexically_normal().string()};
  if (parsed.has("collect")) return collect(job.spec, job.runs, job.dir, parsed.get("metric").value_or(""));
  return run_sweep_job(job, parsed, emit_dir);
}

}  // namespace rlm::app
