// Where a training run's console lines go: stdout for `rlm train` and a sweep's worker process (whose stdout is its
// log), or the run's log file for a run that a sweep trains on a thread of its own process (`--in-process`), where
// one stdout is shared by every run. Per thread, so the trainers and `rlm train`'s messages need not know which.
#pragma once
#include <cstdio>

namespace rlm {

/// The calling thread's output for run messages: stdout unless a RunOutputScope says otherwise.
std::FILE* run_output();

/// Sends the calling thread's run messages to `out` while it lives (the previous output after).
class RunOutputScope {
 public:
  explicit RunOutputScope(std::FILE* out);
  RunOutputScope(const RunOutputScope&) = delete;
  RunOutputScope& operator=(const RunOutputScope&) = delete;
  ~RunOutputScope();

 private:
  std::FILE* previous_;
};

}  // namespace rlm
