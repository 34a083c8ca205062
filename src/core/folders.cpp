#include "core/folders.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm {
namespace fs = std::filesystem;
namespace {

/// A path as an error line shows it: whole up to 200 characters, else its start and end.
std::string shown(const fs::path& path) {
  std::string text = path.string();
  if (text.size() <= 200) return text;
  return fmt::format("{}...{} ({} characters)", text.substr(0, 100), text.substr(text.size() - 60), text.size());
}

}  // namespace

void create_folders(const fs::path& folder, std::string_view what) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (!ec && fs::is_directory(folder, ec)) return;
  // Name the component that is in the way, the commonest cause ("--out results.csv/x").
  std::string reason = ec ? ec.message() : "it is not a folder";
  for (fs::path prefix; const auto& part : folder) {
    prefix /= part;
    std::error_code ignored;
    if (fs::exists(prefix, ignored) && !fs::is_directory(prefix, ignored)) {
      reason = fmt::format("'{}' is a file, not a folder", shown(prefix));
      break;
    }
  }
  throw UsageError(fmt::format("cannot create {} '{}': {}", what, shown(folder), reason));
}

}  // namespace rlm
