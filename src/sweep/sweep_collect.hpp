// `rlm sweep --collect`: each run's final and best value of a metric, read from its metrics.jsonl, and the runs
// grouped by what they sweep (config and swept values, seeds pooled) into one table of mean ± std over seeds.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "sweep/sweep_spec.hpp"

namespace rlm::sweep {

/// One run's numbers. A run that has not logged the metric yet has values = 0 and NaN final/best.
struct RunResult {
  SweepRun run;
  /// finished | partial | missing (no metrics.jsonl) | failed (its last attempt failed) | corrupt (metrics.jsonl
  /// unreadable, or a finished run without a metrics row: left out of every table; `problem` says why)
  std::string status;
  std::string problem;
  std::string metric;      ///< the metric read: the requested one, or the default this run has (see collect_runs)
  int64_t last_step = 0;   ///< env steps of the last row that has the metric
  int64_t values = 0;      ///< rows with a finite value of the metric
  double final_value = 0;  ///< the last finite value
  double best_value = 0;   ///< the largest finite value (the FFM paper's MMER takes this over iterations)
};

/// A group of runs that differ only in their seed.
struct GroupResult {
  std::string config_label;
  std::vector<std::pair<std::string, std::string>> swept;
  std::string metric;
  int seeds = 0;                                                      ///< runs with a value
  int runs = 0;                                                       ///< runs in the group
  double final_mean = 0, final_std = 0, best_mean = 0, best_std = 0;  ///< std: sample (n − 1); 0 for one seed
  int64_t last_step_min = 0;                                          ///< the fewest env steps any of its runs reached
};

/// Reads sweep_dir/runs/<id>/metrics.jsonl of each run (and its done.json / failed.json markers). `metric` empty:
/// eval/episode_return_mean where the run logged any finite value of it, else charts/episode_return_mean.
/// Throws rlm::UsageError naming the file and line of a malformed metrics row.
std::vector<RunResult> collect_runs(const std::filesystem::path& sweep_dir, const std::vector<SweepRun>& runs,
                                    const std::string& metric);

/// Groups in first-appearance order.
std::vector<GroupResult> group_results(const std::vector<RunResult>& results);

/// The tables `--collect` writes: one row per group (CSV and Markdown) and per run (CSV).
std::string groups_csv(const std::vector<GroupResult>& groups);
std::string groups_markdown(const std::vector<GroupResult>& groups);
std::string runs_csv(const std::vector<RunResult>& results);

}  // namespace rlm::sweep
