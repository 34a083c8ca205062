// The checks of the options every run has (run_config.hpp).
#include "core/run_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/text_checks.hpp"

namespace rlm {

void ExperimentConfig::check(const CheckContext& c) const {
  const bool unprintable = has_control_character(name) || !is_valid_utf8(name);
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos || name == "." || name == ".." ||
      unprintable || name.size() > 100) {
    c.report(
        {c.key("name")},
        fmt::format("{} = '{}' must be one folder name: no '/' or '\\', not '.' or '..', UTF-8 without control "
                    "characters, at most 100 bytes",
                    c.key("name"),
                    unprintable ? std::string("<with control characters or invalid UTF-8>") : name.substr(0, 120)));
  }
  if (has_control_character(runs_dir) || !is_valid_utf8(runs_dir)) {
    c.report({c.key("runs_dir")}, c.key("runs_dir") + " must be UTF-8 without control characters");
  }
  // Linux refuses paths over PATH_MAX (4096) bytes and folder names over NAME_MAX (255); a run's files lie up to
  // ~200 characters below runs_dir (name, timestamp, checkpoints/ckpt_....pt and a temp suffix).
  constexpr size_t kMaxRunsDir = 3800, kMaxFolderName = 255;
  size_t longest_part = 0;
  for (const auto& part : std::filesystem::path(runs_dir)) longest_part = std::max(longest_part, part.native().size());
  if (runs_dir.size() > kMaxRunsDir || longest_part > kMaxFolderName) {
    c.report({c.key("runs_dir")},
             fmt::format("{} is too long for Linux paths ({} characters, a folder name of {}; at most {} and {})",
                         c.key("runs_dir"), runs_dir.size(), longest_part, kMaxRunsDir, kMaxFolderName));
  }
}

}  // namespace rlm
