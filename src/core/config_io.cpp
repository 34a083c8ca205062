#include "core/config_io.hpp"

#include <fmt/format.h>

#include "core/config_reader.hpp"

namespace rlm {

std::string locate(const ConfigOrigins& origins, const std::string& key, const std::string& source,
                   const std::string& message) {
  const auto it = origins.find(key);
  return fmt::format("{}: {}", it != origins.end() ? it->second : source, message);
}

std::optional<int64_t> parse_integer(std::string_view text) { return config_reader::to_integer(text); }

}  // namespace rlm
