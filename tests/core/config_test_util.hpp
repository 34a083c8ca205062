// Shared by the config tests: parse YAML text as if it were the file "x.yaml", and the one-line error it gives.
#pragma once
#include <string>
#include <vector>

#include "agents/experiment_config.hpp"
#include "core/error.hpp"

namespace rlm::config_test {

inline Config parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_config(text, "x.yaml", overrides);
}

/// The message of the ConfigError that parsing `text` throws ("" if it throws none).
inline std::string error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse(text, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace rlm::config_test
