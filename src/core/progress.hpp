// The one console line a training run shows: where it is, how fast it goes, how well it does, when it ends.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace rlm {

/// "1h02m", "20m13s", "42s"; "-" for a negative or non-finite duration (an ETA that cannot be estimated yet).
std::string format_duration(double seconds);

/// 1234567 -> "1,234,567".
std::string format_count(int64_t value);

/// `[train] 131,072/15,000,000 steps (0.9%) | 12.3k steps/s | return 0.421 (1285 eps) | ETA 20m13s`; a NaN
/// mean return (no episode finished yet) shows as "-".
std::string format_progress(int64_t steps, int64_t total_steps, double steps_per_second, double mean_return,
                            int64_t episodes);

class ProgressLine {
 public:
  /// On a terminal the line is rewritten in place with '\r'; into a file or pipe (Slurm logs, CI) every update is
  /// its own line, because carriage returns would make such logs unreadable. `file_phase_seconds` throttles phase()
  /// lines into a file or pipe (0: all of them); on a terminal they are throttled to a few per second.
  ProgressLine(int64_t total_steps, bool enabled, std::FILE* out = stdout, double file_phase_seconds = 30.0);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine();

  void update(int64_t steps, double steps_per_second, double mean_return, int64_t episodes);
  /// Where the current iteration is ("iter 3: update epoch 4/30"), after the last update()'s figures, so a long
  /// iteration is not silence. Cheap to call often: `text` is only built when a line is due.
  template <class MakeText>
  void phase(MakeText&& make_text) {
    if (enabled_ && due()) show_phase(make_text());
  }
  /// Ends the live line so later output starts on a fresh line; safe to call more than once.
  void finish();

 private:
  int64_t total_steps_;
  bool enabled_;
  std::FILE* out_;
  bool live_;              ///< out_ is a terminal: rewrite one line instead of printing many
  size_t last_width_ = 0;  ///< length of the live line now shown, so a shorter one can blank its tail
  std::string status_;     ///< the last update()'s line
  std::chrono::steady_clock::time_point last_shown_;
  std::chrono::duration<double> phase_interval_;

  bool due() const { return std::chrono::steady_clock::now() - last_shown_ >= phase_interval_; }
  void show_phase(const std::string& text);
  void show(const std::string& line);
};

}  // namespace rlm
