// Training a run, as `rlm train` does it, for the commands that start runs of their own (`rlm sweep`).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rlm::app {

/// Trains a new run of `config_file` with `overrides` in `run_dir` (which must not exist yet), or in a new
/// runs/<name>/<timestamp> folder when it is empty. Returns 0 when training finished, 128 + signal when stopped.
int train_new_run(const std::string& config_file, const std::vector<std::string>& overrides,
                  const std::optional<std::filesystem::path>& run_dir);
/// Continues `run_dir` from its newest checkpoint (overrides: resume-safe keys only). Same exit statuses.
int resume_run(const std::filesystem::path& run_dir, const std::vector<std::string>& overrides);

}  // namespace rlm::app
