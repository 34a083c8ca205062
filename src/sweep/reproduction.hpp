// `rlm reproduce <paper>/<table>`: a paper's published numbers (configs/repro/<folder>/paper.yaml) beside ours from
// the runs of the folder's sweep file, with a verdict per cell.
//
// paper.yaml:
//   id: shm/table1                      # what `rlm reproduce` is given
//   title: ...                          # one line
//   source: {paper: ..., table: ..., page: 8}
//   sweep: sweep.yaml                   # the runs, relative to this file
//   metric: charts/episode_return_mean  # the metric each run contributes ...
//   statistic: final                    # ... its last value (final) or its maximum over the run (best: MMER)
//   scale: 100                          # ours × scale is compared with the published numbers
//   spread: std                         # the paper's error bars: std (sample std over runs) or se (standard error)
//   decimals: 1                         # digits after the point in the Markdown table
//   cells: {gru/autoencode_easy: [-37.9, 7.7], ...}  # sweep config label → published [mean, spread], [mean] when
//                                                    # the paper gives no error bar, or null when it has no number
//   aggregates: [{name: GRU, cells: gru/, mean: -28.4, std: 1.3}]  # rows over the cells whose label starts so
//
// Statistics: per cell, mean ± sample std over seeds and the interquartile mean (IQM: the mean of the middle 50% of
// the sorted values, scipy's trim_mean(x, 0.25) as rliable computes it) with a 95% percentile bootstrap confidence
// interval (2000 resamples of the runs with replacement; per task for aggregates, rliable's stratified bootstrap).
// An aggregate's mean ± std is over seeds of the per-seed average over its cells (the papers' "mean ± std over
// runs" of a column average); its IQM pools every run of every cell. Verdict: "inside" when our mean lies within the
// published mean ± spread (ours is then given with the same kind of spread), else "below" or "above"; a published
// number without an error bar is "inside" when it lies within our IQM's 95% interval. The table states the budget.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep_collect.hpp"

namespace rlm::sweep {

struct PublishedValue {
  double mean = 0;
  double spread = 0;       ///< the paper's error bar: a std or a standard error (PaperTable::spread)
  bool has_spread = true;  ///< false: the paper prints the number alone
};

struct PaperTable {
  std::filesystem::path file;
  std::string id, title, source_paper, source_table, source_page;
  std::filesystem::path sweep;  ///< the sweep file, resolved
  std::string metric = "charts/episode_return_mean";
  std::string statistic = "final";  ///< final | best
  double scale = 1;
  std::string spread = "std";  ///< std | se: what the published error bars are, and so what ours are shown as
  int decimals = 1;
  /// Every cell of the table; a paper that reports only aggregates (the FFM paper's MMER) has no number per cell.
  std::vector<std::pair<std::string, std::optional<PublishedValue>>> cells;
  struct Aggregate {
    std::string name, prefix;
    PublishedValue published;
  };
  std::vector<Aggregate> aggregates;
};

/// Reads paper.yaml; rlm::ConfigError "FILE:LINE: key: what" for anything malformed.
PaperTable load_paper_table(const std::filesystem::path& file);

/// scipy.stats.trim_mean(values, 0.25): the mean after cutting floor(n/4) values from each end of the sorted values.
double interquartile_mean(std::vector<double> values);

/// 95% percentile bootstrap interval of the IQM: `strata` are resampled each on its own (runs of one task), pooled,
/// and the IQM taken, `resamples` times, from a fixed-seed generator (the same numbers every time).
std::pair<double, double> iqm_confidence_interval(const std::vector<std::vector<double>>& strata, int resamples = 2000,
                                                  uint64_t seed = 0);

struct ReproductionRow {
  std::string name;  ///< the cell label or the aggregate's name
  bool aggregate = false;
  int runs = 0;  ///< runs with a value (each seed once per cell)
  double mean = 0, std = 0, iqm = 0, ci_low = 0, ci_high = 0;
  double spread = 0;  ///< std, or the standard error std/√n when the table's spread is se
  std::optional<PublishedValue> published;
  std::string verdict;  ///< inside | below | above | not run | no published number
};

/// Rows for every cell of the table (in its order) and then its aggregates, from the finished runs among the
/// collected ones (matched by config label), each contributing its final or best value × scale.
std::vector<ReproductionRow> reproduction_rows(const PaperTable& table, const std::vector<RunResult>& results);

/// The Markdown report: title, source, budget and seeds, then one table; and the same rows as CSV.
std::string reproduction_markdown(const PaperTable& table, const std::vector<ReproductionRow>& rows, double budget,
                                  int seeds);
std::string reproduction_csv(const PaperTable& table, const std::vector<ReproductionRow>& rows, double budget);

}  // namespace rlm::sweep
