// Did-you-mean hints for unknown config keys, and the key-path helpers config.cpp shares with them.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlm::config_detail {

/// "algo" + "lr" -> "algo.lr"; an empty prefix gives the key alone.
std::string join(std::string_view prefix, std::string_view key);

/// True when `key` lies inside the section `section` ("algo.ppo.lr" in "algo.ppo", not "algo.ppo" itself, nor
/// "algo.ppox").
inline bool lies_under(std::string_view key, std::string_view section) {
  return key.size() > section.size() && key.starts_with(section) && key[section.size()] == '.';
}

/// Splits at every `sep`, keeping empty parts: "a..b" -> {"a", "", "b"}.
std::vector<std::string> split(std::string_view text, char sep);

/// Edit distance with adjacent transpositions (optimal string alignment), so "lr" -> "rl" costs 1.
size_t edit_distance(std::string_view a, std::string_view b);

/// The known key path nearest to `unknown`, or nothing when no key is close. In order of preference:
/// a typo within the same section (algo.gama -> algo.gamma, algo.lerning_rate -> algo.lr by its initials,
/// algorithm -> algo by prefix), then the same key under another section (memory.type -> model.memory.type,
/// algo.seed -> experiment.seed), then a typo of a key in another section.
std::optional<std::string> suggest_key(const std::string& unknown, const std::vector<std::string>& known);

}  // namespace rlm::config_detail
