// Small helpers to read `--flag value` options and `key.path=value` overrides from a sub-command's arguments.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "app/commands.hpp"

namespace rlm::app {

struct ParsedArgs {
  std::vector<std::pair<std::string, std::string>> options;  ///< --name value (value "" for switches)
  std::vector<std::string> overrides;                        ///< key.path=value
  std::optional<std::string> get(const std::string& name) const;
  bool has(const std::string& name) const;
};

/// `switches` are flags without a value; every other --flag takes one; a token with '=' is an override; anything
/// else (or an unknown flag) is a UsageError naming it.
ParsedArgs parse_args(const Args& args, const std::vector<std::string>& flags_with_value,
                      const std::vector<std::string>& switches, bool allow_overrides);

}  // namespace rlm::app
