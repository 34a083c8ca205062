#include "app/source_dir.hpp"

#include <cstdlib>

namespace rlm::app {

std::filesystem::path source_dir() {
  if (const char* dir = std::getenv("RLM_SOURCE_DIR"); dir && *dir) return dir;
  return std::filesystem::canonical("/proc/self/exe").parent_path().parent_path();
}

}  // namespace rlm::app
