// What the sweep layer's file readers (sweep files, paper tables) and result tables share: loading a YAML file with
// errors located at file:line:key, the mean ± sample standard deviation over seeds, and numbers in CSV cells.
#pragma once
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace rlm::sweep {

/// The parsed file; rlm::UsageError "<what> 'FILE' not found" (or a folder), rlm::ConfigError "FILE:LINE: malformed
/// YAML: ...", and the same for a second YAML document or a key given twice in one mapping (which YAML parsers
/// resolve silently, the later one winning), as train configs are read.
YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what);
YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what);

/// Throws rlm::ConfigError "FILE:LINE: key: what" (without the line when the node has no position).
[[noreturn]] void fail_at(const std::filesystem::path& file, const YAML::Node& node, const std::string& key,
                          const std::string& what);

/// A table cell: the number in 6 significant digits, or empty for a NaN (no value).
std::string table_number(double v);

/// NaN for no values.
inline double mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

/// With n − 1 (as papers report spread over seeds): 0 for one value, NaN for none.
inline double sample_std(const std::vector<double>& v) {
  if (v.size() < 2) return v.empty() ? std::numeric_limits<double>::quiet_NaN() : 0.0;
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace rlm::sweep
