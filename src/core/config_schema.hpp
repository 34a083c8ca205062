// The vocabulary of config schemas: valid ranges and choices of fields. Each layer declares its own options as
// structs whose visit() lists every field once with its range or choices (envs/env_config.hpp, memory/*_config.hpp,
// agents/*_config.hpp); core/config_reader.hpp reads, checks and writes any such struct.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlm {

/// Valid interval of a number field; an open end excludes its bound. Infinite bounds mean "no limit".
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
};
constexpr Range in_range(double lo, double hi) { return {lo, hi, false, false}; }  ///< [lo, hi]
constexpr Range at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false, true}; }
constexpr Range greater_than(double lo) { return {lo, std::numeric_limits<double>::infinity(), true, true}; }
constexpr Range any_number() { return {}; }

/// Valid values of a string field; an empty list accepts any non-empty string.
struct Choices {
  std::vector<std::string_view> values;
};
inline Choices one_of(std::initializer_list<std::string_view> values) { return {values}; }
inline Choices non_empty() { return {}; }

/// The YAML names of an enum field's values, listed in error messages in this order. A backend's option can then be
/// its enum in the config struct itself, so the struct the YAML fills is the struct the backend reads.
template <class E>
struct EnumChoices {
  std::vector<std::pair<std::string_view, E>> values;
  std::string_view name_of(E value) const {
    for (const auto& [name, e] : values) {
      if (e == value) return name;
    }
    return "?";  // an enumerator left out of the list: a programming error that the config tests catch
  }
};
template <class E>
EnumChoices<E> named(std::initializer_list<std::pair<std::string_view, E>> values) {
  return {values};
}

/// Reports a problem that involves several fields: `keys` are their full paths, the one most likely at fault first;
/// the error points at the first of them that the file or command line set. It throws ConfigError.
using Report = std::function<void(std::initializer_list<std::string_view> keys, const std::string& message)>;

/// What a config struct's `void check(const CheckContext&) const` gets: where the struct sits (its section's path,
/// such as model.memory or model.off_policy.actor_memory) and the report. A struct checks the fields it owns, wherever
/// it sits; config_reader::check_sections calls every check() of a config tree.
struct CheckContext {
  std::string_view prefix;
  const Report& report;
  /// The full path of one of the struct's fields.
  std::string key(std::string_view field) const {
    return prefix.empty() ? std::string(field) : std::string(prefix) + "." + std::string(field);
  }
};

/// Upper bound of every layer width and memory size: 16x the widest published setting (FFM/SHM's 1024-wide
/// outputs, GRU 2048 in SHM's sweep), so a typo such as 2147483647 is a config error, not a failed 8 GB allocation.
inline constexpr double kMaxWidth = 32768;

}  // namespace rlm
