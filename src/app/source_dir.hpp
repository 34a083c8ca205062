// Where the repository is, for commands that read its configs and scripts (bench, bench sac, reproduce).
#pragma once
#include <filesystem>

namespace rlm::app {

/// $RLM_SOURCE_DIR (the ./rlm script sets it), else the folder above the one holding this binary (build/..).
std::filesystem::path source_dir();

}  // namespace rlm::app
