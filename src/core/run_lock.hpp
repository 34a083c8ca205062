// One writer per run folder: `train` and `train --resume` hold an OS lock (flock) on RUN_DIR/.lock for as long as
// they run. The kernel releases it when the process dies, kill -9 included, so a crashed run never blocks its resume,
// while a second process on a folder in use is refused before it writes anything (it would otherwise duplicate
// metric rows and race on checkpoints).
#pragma once
#include <filesystem>
#include <string>

#include "core/error.hpp"

namespace rlm {

/// Another process holds the run folder's lock. `holder` is its pid, or empty when the lock file does not say.
struct RunFolderInUse : UsageError {
  RunFolderInUse(const std::string& message, std::string holder_pid)
      : UsageError(message), holder(std::move(holder_pid)) {}
  std::string holder;
};

class RunFolderLock {
 public:
  /// Takes the lock, or throws RunFolderInUse naming the folder and the holder's pid when another process has it,
  /// UsageError when the lock file cannot be opened. The folder must exist.
  explicit RunFolderLock(const std::filesystem::path& run_dir);
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;
  ~RunFolderLock();

 private:
  int fd_ = -1;
};

}  // namespace rlm
