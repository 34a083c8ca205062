// Every sweep file the repository ships (sweeps/*.yaml and configs/repro/*/sweep.yaml) expands, and every run of it
// loads as a config with its overrides: a sweep that would fail only after hours of other runs is caught here.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "agents/experiment_config.hpp"
#include "sweep/sweep_spec.hpp"

namespace fs = std::filesystem;

TEST_CASE("sweep: the shipped sweep files expand into runs whose configs load", "[sweep]") {
  const char* source = std::getenv("RLM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(source) / "sweeps"))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(source) / "configs" / "repro"))
    if (fs::exists(e.path() / "sweep.yaml")) files.push_back(e.path() / "sweep.yaml");
  REQUIRE(files.size() >= 2);
  for (const auto& file : files) {
    INFO(file.string());
    const auto runs = rlm::sweep::expand(rlm::sweep::load_sweep(file));
    CHECK_FALSE(runs.empty());
    for (const auto& run : runs) {
      INFO(run.id);
      const auto config = rlm::load_config(run.config, run.overrides);
      CHECK(config.experiment.seed == run.seed);
    }
  }
}
