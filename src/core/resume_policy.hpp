// Which config keys `train --resume RUN key=value` may change. A resumed run must be the experiment its folder
// claims to be, so every key is either applied from the next iteration on (budgets, optimiser and loss settings,
// logging, checkpoint cadence, threads, device) or refused with exit 2 before anything is written (what the
// checkpoint or the run's random streams were built from: architecture, env, seed, the adapted KL coefficient).
#pragma once
#include <map>
#include <optional>
#include <string>

#include "core/config_io.hpp"

namespace rlm {

/// Why `key` cannot change on resume, or nullopt when a resumed run applies a new value.
std::optional<std::string> resume_refusal(const std::string& key);

/// Throws ConfigError for the first key whose value differs between the run's saved config and the requested one
/// (each as key path -> value text, config_values()) and that resume_refusal() refuses, located where `origins`
/// says it was set (the override).
void check_resume_changes(const std::map<std::string, std::string>& saved,
                          const std::map<std::string, std::string>& requested, const ConfigOrigins& origins);

}  // namespace rlm
