#include "core/resume_policy.hpp"

#include <fmt/format.h>

#include <string_view>
#include <utility>

#include "core/error.hpp"

namespace rlm {
namespace {

// Longest matching prefix wins; a prefix ending in '.' covers a section, anything else one key.
constexpr std::pair<std::string_view, std::string_view> kRefused[] = {
    {"experiment.name", "the run folder is the one given to --resume"},
    {"experiment.runs_dir", "the run folder is the one given to --resume"},
    {"experiment.seed", "every random stream of the run is derived from it"},
    {"env.", "the run's episodes and its observation and action layout come from it"},
    {"model.", "the checkpoint holds a model of the saved architecture"},
    {"algo.type", "the run's trainer is fixed"},
    {"algo.ppo.batch_mode", "the run's trainer is fixed"},
    {"algo.ppo.kl_coeff", "it is the initial KL coefficient; the adapted one is restored from the checkpoint"},
};
// Exceptions inside refused sections: results do not depend on the number of env threads.
constexpr std::string_view kAllowed[] = {"env.num_threads"};

}  // namespace

std::optional<std::string> resume_refusal(const std::string& key) {
  for (std::string_view allowed : kAllowed) {
    if (key == allowed) return std::nullopt;
  }
  for (const auto& [prefix, reason] : kRefused) {
    const bool section = prefix.ends_with('.');
    if (section ? key.starts_with(prefix) : key == prefix) return std::string(reason);
  }
  return std::nullopt;
}

void check_resume_changes(const std::map<std::string, std::string>& before,
                          const std::map<std::string, std::string>& after, const ConfigOrigins& origins) {
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    if (it == before.end() || it->second == value) continue;
    if (const auto reason = resume_refusal(key)) {
      throw ConfigError(locate(origins, key, "command line",
                               fmt::format("{} cannot change on resume ({}; the run has {}); start a new run with "
                                           "--config instead",
                                           key, *reason, it->second)));
    }
  }
}

}  // namespace rlm
