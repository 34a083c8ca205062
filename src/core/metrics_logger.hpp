// Training metrics in three forms from one call: metrics.jsonl (lossless, every tag), metrics.csv (spreadsheets,
// pandas) and TensorBoard event files. A resumed run appends to the same files, so a run's curves stay in one place.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/tensorboard_writer.hpp"

namespace rlm {

class MetricsLogger {
 public:
  /// Opens (or creates) run_dir/metrics.jsonl and run_dir/metrics.csv for appending; an existing CSV keeps its
  /// header. `tensorboard` adds an event file in run_dir.
  MetricsLogger(const std::filesystem::path& run_dir, bool tensorboard);

  /// One row: {"step": step, tag: value, ...} in JSONL (non-finite values as null); the CSV follows the header
  /// fixed by its first row (missing tags -> empty cells, new tags only in JSONL); TensorBoard gets the finite values
  /// only. Flushed before returning.
  void log(int64_t step, const std::vector<std::pair<std::string, double>>& scalars);

  /// Keeps only rows with row step <= step in both files and the TensorBoard event files, each rewritten atomically. A
  /// run resumed from an older checkpoint calls this first, so the steps it repeats are not logged twice.
  static void truncate_after(const std::filesystem::path& run_dir, int64_t step);

 private:
  std::filesystem::path jsonl_path_;
  std::filesystem::path csv_path_;
  std::ofstream jsonl_;
  std::ofstream csv_;
  std::vector<std::string> csv_columns_;  ///< tags after "step"; empty until the header exists
  std::unique_ptr<TensorBoardWriter> tensorboard_;
};

}  // namespace rlm
