// Run folders for trainer tests: a fresh temp folder per test and process, removed when the test binary exits (kept
// with RLM_KEEP_TEST_DIRS set, to look at after a failure), and metrics.jsonl without the timing columns, which is
// what two runs that should be bitwise identical must agree on.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rlm::test {

/// The folders fresh_dir made, removed at exit.
struct TestDirs {
  std::vector<std::filesystem::path> made;
  ~TestDirs() {
    if (std::getenv("RLM_KEEP_TEST_DIRS") != nullptr) return;
    for (const auto& dir : made) {
      std::error_code ignored;  // a folder a test removed itself, or one still in use: nothing to do
      std::filesystem::remove_all(dir, ignored);
    }
  }
};

inline std::filesystem::path fresh_dir(const std::string& name) {
  static TestDirs dirs;
  auto dir = std::filesystem::temp_directory_path() / ("rlm-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  dirs.made.push_back(dir);
  return dir;
}

inline std::vector<nlohmann::json> metrics_without_timing(const std::filesystem::path& run_dir) {
  std::vector<nlohmann::json> rows;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto row = nlohmann::json::parse(line);
    for (const char* key :
         {"charts/steps_per_second", "charts/rollout_seconds", "charts/iteration_seconds", "charts/update_seconds"})
      row.erase(key);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace rlm::test
