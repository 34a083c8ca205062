// One writer per run folder: `train` and `train --resume` hold an OS lock (flock) on RUN_DIR/.lock for as long as
// they run. The kernel releases it when the process dies, kill -9 included, so a crashed run never blocks its resume,
// while a second process on a folder in use is refused before it writes anything (it would otherwise duplicate
// metric rows and race on checkpoints).
#pragma once
#include <filesystem>

namespace rlm {

class RunFolderLock {
 public:
  /// Takes the lock or throws UsageError naming the folder (and the holder's pid when known). The folder must exist.
  explicit RunFolderLock(const std::filesystem::path& run_dir);
  RunFolderLock(const RunFolderLock&) = delete;
  RunFolderLock& operator=(const RunFolderLock&) = delete;
  ~RunFolderLock();

 private:
  int fd_ = -1;
};

}  // namespace rlm
