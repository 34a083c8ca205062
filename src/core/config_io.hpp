// What every layer needs to report a config value in its place: where each key was set (file:line or the
// command-line override), and errors found after parsing located there. The schema engine is config_reader.hpp;
// the experiment's config is agents/experiment_config.hpp.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace rlm {

/// Where each key path was set: "file.yaml:7" or "command line: key=value". Keys left at their default are absent.
using ConfigOrigins = std::map<std::string, std::string>;

/// "<where key was set>: message" (file:line or the override), or "<source>: message" for a key left at its default.
std::string locate(const ConfigOrigins& origins, const std::string& key, const std::string& source,
                   const std::string& message);

/// Runs `f`; a ConfigValueError it throws (a value only a later stage could judge) is rethrown as a ConfigError
/// located where its key was set, as parse errors are.
template <class F>
decltype(auto) with_config_locations(const ConfigOrigins& origins, const std::string& source, F&& f) {
  try {
    return f();
  } catch (const ConfigValueError& e) {
    throw ConfigError(locate(origins, e.key, source, e.what()));
  }
}

/// An integer written as a config accepts it: 1000, +1000 or 1e3; nullopt for 1.5, 3abc, an empty string or overflow.
std::optional<int64_t> parse_integer(std::string_view text);

}  // namespace rlm
