// See sweep_files.hpp.
#include "sweep/sweep_files.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>

#include "core/config_reader.hpp"
#include "core/error.hpp"

namespace rlm::sweep {

namespace {

/// Refuses a key that appears twice in one mapping, anywhere in the tree. `budget` bounds the nodes visited: aliases
/// share nodes, so a small file can name a huge tree, and no sweep or paper file needs more.
void check_unique_keys(const std::filesystem::path& file, const YAML::Node& node, int64_t& budget) {
  if (--budget < 0)
    throw ConfigError(fmt::format("{}: more than {} YAML nodes (nested aliases?); a sweep or paper file is small",
                                  file.string(), config_reader::kMaxYamlNodes));
  if (node.IsSequence()) {
    for (const auto& child : node) check_unique_keys(file, child, budget);
  } else if (node.IsMap()) {
    std::map<std::string, int> first_line;
    for (const auto& item : node) {
      const YAML::Node key = item.first;
      if (key.IsScalar()) {
        const auto [seen, fresh] = first_line.emplace(key.Scalar(), key.Mark().line + 1);
        if (!fresh)
          throw ConfigError(fmt::format("{}:{}: duplicate key '{}' (first set on line {})", file.string(),
                                        key.Mark().line + 1, key.Scalar(), seen->second));
      }
      check_unique_keys(file, item.second, budget);
    }
  }
}

}  // namespace

YAML::Node load_yaml_file(const std::filesystem::path& file, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw UsageError(fmt::format("{} '{}' is a folder, not a file", what, file.string()));
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAllFromFile(file.string());
  } catch (const YAML::BadFile&) {
    throw UsageError(fmt::format("{} '{}' not found", what, file.string()));
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}: malformed YAML: {}", file.string(), e.mark.line + 1, e.msg));
  }
  if (documents.size() > 1)
    throw ConfigError(fmt::format("{}:{}: holds {} YAML documents ('---' starts another); a {} is one document",
                                  file.string(), documents[1].Mark().line + 1, documents.size(), what));
  const YAML::Node root = documents.empty() ? YAML::Node() : documents.front();
  int64_t budget = config_reader::kMaxYamlNodes;
  check_unique_keys(file, root, budget);
  return root;
}

std::string table_number(double v) { return std::isfinite(v) ? fmt::format("{:.6g}", v) : std::string(); }

void fail_at(const std::filesystem::path& file, const YAML::Node& node, const std::string& key,
             const std::string& what) {
  const YAML::Mark mark = node.Mark();
  if (mark.line >= 0) throw ConfigError(fmt::format("{}:{}: {}: {}", file.string(), mark.line + 1, key, what));
  throw ConfigError(fmt::format("{}: {}: {}", file.string(), key, what));
}

}  // namespace rlm::sweep
