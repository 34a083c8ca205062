// NumpyLegacyRng against numpy's legacy RandomState: raw draws and permutations recorded from numpy 2.4
// (scripts/record_numpy_legacy.py), pomdp-baselines' Wind task set and split recorded from its own code, and the SHM
// task sets (tests/data/pomdp_baselines/meta_tasks_golden.json, computed by a pure-Python re-implementation of the
// same generator and the constructors' draw order; docs/envs/meta.md).
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "envs/numpy_legacy_rng.hpp"
#include "test_data.hpp"

using rlm::envs::NumpyLegacyRng;

namespace {

nlohmann::json load(const std::string& name) { return rlm::envs::test::load_test_data("pomdp_baselines/" + name); }

/// The Wind constructors' task list: np.random.seed(1337), then [uniform(-w, w), uniform(-w, w)] per task; the
/// learner's permutation continues the same stream.
std::pair<std::vector<std::array<double, 2>>, std::vector<int>> wind_tasks(int n, double range) {
  NumpyLegacyRng rng(1337);
  std::vector<std::array<double, 2>> winds;
  for (int i = 0; i < n; ++i) {
    const double x = rng.uniform(-range, range);
    winds.push_back({x, rng.uniform(-range, range)});
  }
  return {winds, rng.permutation(n)};
}

}  // namespace

TEST_CASE("numpy legacy rng: random_sample and permutation equal numpy's", "[envs][numpy_rng]") {
  const auto data = load("numpy_legacy.json");
  for (const auto& [seed, want] : data.at("raw").items()) {
    INFO("seed " << seed);
    NumpyLegacyRng rng(static_cast<uint32_t>(std::stoul(seed)));
    for (const auto& x : want.at("random_sample")) CHECK(rng.random_sample() == x.get<double>());
    CHECK(rng.permutation(200) == want.at("permutation_200").get<std::vector<int>>());
  }
}

TEST_CASE("numpy legacy rng: pomdp-baselines' Wind tasks and split, as its code draws them", "[envs][numpy_rng]") {
  const auto want = load("numpy_legacy.json").at("wind_60");
  const auto [winds, perm] = wind_tasks(60, 0.08);
  const auto recorded = want.at("winds");
  REQUIRE(recorded.size() == winds.size());
  for (size_t i = 0; i < winds.size(); ++i) {
    CHECK(winds[i][0] == recorded[i][0].get<double>());
    CHECK(winds[i][1] == recorded[i][1].get<double>());
  }
  CHECK(perm == want.at("task_permutation").get<std::vector<int>>());
}

TEST_CASE("numpy legacy rng: the task sets of the SHM paper's Wind and Point Robot", "[envs][numpy_rng]") {
  const auto golden = load("meta_tasks_golden.json");
  {
    const auto& want = golden.at("shm_wind_200");
    const auto [winds, perm] = wind_tasks(200, 0.1);
    for (size_t i = 0; i < winds.size(); ++i) {
      CHECK(winds[i][0] == Approx(want.at("winds")[i][0].get<double>()).margin(1e-15));
      CHECK(winds[i][1] == Approx(want.at("winds")[i][1].get<double>()).margin(1e-15));
    }
    CHECK(perm == want.at("task_permutation").get<std::vector<int>>());
    const auto train = want.at("split_10_190").at("train").get<std::vector<int>>();
    CHECK(std::vector<int>(perm.begin(), perm.begin() + 10) == train);
  }
  {
    // SHM's SparsePointEnv constructor: seed(1337); the parent's 200 placeholder goals (2 draws each, discarded);
    // reset_task(0) draws a start state (2); the angles U(0, π) (200); goals (cos, sin) shuffled by row;
    // reset_task(0) again (2); then the learner's permutation.
    const auto& want = golden.at("shm_point_robot_sparse_200");
    NumpyLegacyRng rng(1337);
    for (int i = 0; i < 2 * 200 + 2; ++i) rng.random_sample();
    std::vector<std::array<double, 2>> goals;
    for (int i = 0; i < 200; ++i) {
      const double angle = rng.uniform(0.0, 3.14159265358979323846);
      goals.push_back({std::cos(angle), std::sin(angle)});
    }
    rng.shuffle(goals);
    rng.random_sample();
    rng.random_sample();
    const auto perm = rng.permutation(200);
    for (size_t i = 0; i < goals.size(); ++i) {
      CHECK(goals[i][0] == Approx(want.at("goals_on_upper_unit_semicircle")[i][0].get<double>()).margin(1e-12));
      CHECK(goals[i][1] == Approx(want.at("goals_on_upper_unit_semicircle")[i][1].get<double>()).margin(1e-12));
    }
    CHECK(perm == want.at("task_permutation").get<std::vector<int>>());
  }
}
