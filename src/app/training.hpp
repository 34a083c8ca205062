// Training a run, as `rlm train` does it, for the commands that start runs of their own (`rlm sweep`).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/run_lock.hpp"

namespace rlm::app {

/// Trains a new run of `config_file` with `overrides` in `run_dir` (which must not exist yet), or in a new
/// runs/<name>/<timestamp> folder when it is empty. Returns 0 when training finished, 128 + signal when stopped.
int train_new_run(const std::string& config_file, const std::vector<std::string>& overrides,
                  const std::optional<std::filesystem::path>& run_dir);
/// The same in `run_dir`, which the caller has created, locked (`held`) and emptied but for the lock file: a sweep's
/// worker, which must hold the folder before it decides what to do with it.
int train_new_run_in(const std::string& config_file, const std::vector<std::string>& overrides,
                     const std::filesystem::path& run_dir, const RunFolderLock& held);
/// Throws UsageError unless `run_dir` is a folder. `flag` is the option that named it ("--resume"); a checkpoint
/// file given instead is answered with its run folder.
void require_run_folder(const std::filesystem::path& run_dir, const std::string& flag);
/// Continues `run_dir` from its newest checkpoint (overrides: resume-safe keys only). Same exit statuses. `held`:
/// the folder's lock when the caller has it already; otherwise it is taken here.
int resume_run(const std::filesystem::path& run_dir, const std::vector<std::string>& overrides,
               const RunFolderLock* held = nullptr);

}  // namespace rlm::app
