// `rlm sweep --collect` on synthetic run folders with known numbers: final and best values, the default metric,
// statuses, grouping over seeds with mean ± sample std, and the tables.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "sweep/sweep_collect.hpp"

namespace fs = std::filesystem;
using rlm::sweep::SweepRun;

namespace {

SweepRun run(int index, const std::string& type, int64_t seed) {
  SweepRun r;
  r.index = index;
  r.config_label = "a";
  r.seed = seed;
  r.swept = {{"model.memory.type", type}};
  r.id = "a__model.memory.type=" + type + "__seed=" + std::to_string(seed);
  return r;
}

struct SweepDir {
  fs::path dir = fs::temp_directory_path() / ("rlm-test-collect-" + std::to_string(::getpid()));
  SweepDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~SweepDir() { fs::remove_all(dir); }
  void metrics(const SweepRun& r, const std::string& rows, bool done) const {
    const fs::path d = dir / "runs" / r.id;
    fs::create_directories(d);
    std::ofstream(d / "metrics.jsonl") << rows;
    if (done) std::ofstream(d / "done.json") << "{}";
  }
};

}  // namespace

TEST_CASE("collect: final and best values per run, mean and sample std per group", "[sweep]") {
  SweepDir sweep;
  const std::vector<SweepRun> runs = {run(0, "gru", 0), run(1, "gru", 1), run(2, "gru", 2), run(3, "ffm", 0),
                                      run(4, "ffm", 1)};
  // gru: eval returns logged every other row (null in between); finals 0.5, 0.7, 0.9, bests 0.6, 0.7, 0.9.
  sweep.metrics(runs[0],
                "{\"step\": 10, \"charts/episode_return_mean\": 0.1, \"eval/episode_return_mean\": 0.6}\n"
                "{\"step\": 20, \"charts/episode_return_mean\": 0.2, \"eval/episode_return_mean\": null}\n"
                "{\"step\": 30, \"charts/episode_return_mean\": 0.3, \"eval/episode_return_mean\": 0.5}\n",
                true);
  sweep.metrics(runs[1],
                "{\"step\": 10, \"eval/episode_return_mean\": 0.2}\n"
                "{\"step\": 30, \"eval/episode_return_mean\": 0.7}\n",
                true);
  sweep.metrics(runs[2],
                "{\"step\": 10, \"eval/episode_return_mean\": 0.1}\n"
                "{\"step\": 25, \"eval/episode_return_mean\": 0.9}\n"
                "{\"step\": 30, \"eval/episo",  // cut short by a crash: skipped
                false);
  // ffm: no eval metric at all, so the training return; run 4 never started.
  sweep.metrics(runs[3], "{\"step\": 10, \"charts/episode_return_mean\": -0.5}\n", true);
  std::ofstream(sweep.dir / "runs" / runs[3].id / "failed.json") << "{}";  // done wins over an older failure

  const auto results = rlm::sweep::collect_runs(sweep.dir, runs, "");
  REQUIRE(results.size() == 5);
  CHECK(results[0].metric == "eval/episode_return_mean");
  CHECK(results[0].final_value == 0.5);
  CHECK(results[0].best_value == 0.6);
  CHECK(results[0].values == 2);
  CHECK(results[0].last_step == 30);
  CHECK(results[0].status == "finished");
  CHECK(results[2].status == "partial");
  CHECK(results[2].last_step == 25);
  CHECK(results[3].metric == "charts/episode_return_mean");
  CHECK(results[3].status == "finished");
  CHECK(results[4].status == "missing");
  CHECK(results[4].values == 0);

  const auto groups = rlm::sweep::group_results(results);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].swept[0].second == "gru");
  CHECK(groups[0].seeds == 3);
  CHECK(groups[0].runs == 3);
  CHECK(groups[0].final_mean == Approx(0.7));
  CHECK(groups[0].final_std == Approx(0.2));  // sample std of 0.5, 0.7, 0.9
  CHECK(groups[0].best_mean == Approx((0.6 + 0.7 + 0.9) / 3));
  CHECK(groups[0].last_step_min == 25);
  CHECK(groups[1].seeds == 1);
  CHECK(groups[1].runs == 2);
  CHECK(groups[1].final_mean == -0.5);
  CHECK(groups[1].final_std == 0);

  const std::string csv = rlm::sweep::groups_csv(groups);
  CHECK_THAT(csv, Catch::StartsWith("config,swept,metric,seeds,runs,final_mean"));
  CHECK_THAT(csv, Catch::Contains("a,model.memory.type=gru,eval/episode_return_mean,3,3,0.7,0.2,"));
  const std::string md = rlm::sweep::groups_markdown(groups);
  CHECK_THAT(md, Catch::Contains("| a | model.memory.type=gru | eval/episode_return_mean | 3/3 | 0.7 ± 0.2 |"));
  CHECK_THAT(rlm::sweep::runs_csv(results), Catch::Contains(",missing,"));

  SECTION("a named metric; a malformed row in the middle makes that run corrupt, naming file and line") {
    const auto named = rlm::sweep::collect_runs(sweep.dir, runs, "charts/episode_return_mean");
    CHECK(named[0].final_value == 0.3);
    CHECK(named[1].values == 0);
    sweep.metrics(runs[4], "{\"step\": 1}\nnot json\n{\"step\": 2}\n", false);
    const auto with_corrupt = rlm::sweep::collect_runs(sweep.dir, runs, "");
    CHECK(with_corrupt[4].status == "corrupt");
    CHECK(with_corrupt[4].values == 0);
    CHECK_THAT(with_corrupt[4].problem, Catch::Contains("metrics.jsonl:2: not a JSON metrics row"));
    CHECK(with_corrupt[0].status == results[0].status);  // the others are collected as before
    CHECK(with_corrupt[0].final_value == results[0].final_value);
  }
}
