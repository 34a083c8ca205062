// Scalars for TensorBoard without TensorFlow or protobuf: the event file is written natively, so `tensorboard
// --logdir runs/` shows training curves from a torch-free C++ build.
#pragma once
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace rlm {

class TensorBoardWriter {
 public:
  /// Creates log_dir if needed and a new `events.out.tfevents.<unix_time>.<hostname>` in it (a numeric suffix is
  /// added if that name is taken, so two writers never interleave records in one file).
  explicit TensorBoardWriter(const std::filesystem::path& log_dir);

  /// Appends one scalar event and flushes it, so a crash loses nothing already logged.
  void add_scalar(const std::string& tag, double value, int64_t step, double wall_time = now());
  void flush();

  const std::filesystem::path& path() const { return path_; }

  /// Seconds since the Unix epoch, the wall_time TensorBoard expects.
  static double now();

  /// Rewrites each event file in log_dir (atomically, only if it changes) keeping the records with step <= step,
  /// and drops a record cut short by a crash with everything after it. A resumed run calls this first (through
  /// MetricsLogger::truncate_after), so the steps it repeats are not in TensorBoard twice.
  static void truncate_after(const std::filesystem::path& log_dir, int64_t step);

 private:
  struct FileCloser {
    void operator()(std::FILE* file) const { std::fclose(file); }
  };

  void write_record(std::string_view data);

  std::filesystem::path path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
};

}  // namespace rlm
