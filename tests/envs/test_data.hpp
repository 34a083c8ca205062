// Recorded reference data under tests/data/, found through RLM_SOURCE_DIR (ctest sets it to the repository root).
#pragma once
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace rlm::envs::test {

/// tests/data/<relative_path>, parsed; a missing file fails the test with the path it looked for.
inline nlohmann::json load_test_data(const std::string& relative_path) {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  const auto path = std::filesystem::path(root ? root : ".") / "tests/data" / relative_path;
  std::ifstream in(path);
  if (!in) FAIL("recorded data " << path << " not found (set RLM_SOURCE_DIR to the repo root)");
  return nlohmann::json::parse(in);
}

}  // namespace rlm::envs::test
