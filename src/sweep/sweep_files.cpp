// See sweep_files.hpp.
#include "sweep/sweep_files.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::sweep {

YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what) {
  try {
    return YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw UsageError(fmt::format("{} '{}' not found", what, file.string()));
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}: malformed YAML: {}", file.string(), e.mark.line + 1, e.msg));
  }
}

std::string table_number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(); }

void fail_at(const std::filesystem::path& file, const YAML::Node& node, const std::string& key,
             const std::string& what) {
  const YAML::Mark mark = node.Mark();
  if (mark.line >= 0) throw ConfigError(fmt::format("{}:{}: {}: {}", file.string(), mark.line + 1, key, what));
  throw ConfigError(fmt::format("{}: {}: {}", file.string(), key, what));
}

}  // namespace rlm::sweep
