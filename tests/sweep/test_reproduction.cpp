// `rlm reproduce`'s table on synthetic results with known numbers: IQM as scipy's trim_mean(x, 0.25), its bootstrap
// interval, per-cell and aggregate rows with verdicts, and the paper.yaml files (ours and malformed ones).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "sweep/reproduction.hpp"

namespace fs = std::filesystem;
using namespace rlm::sweep;

namespace {

RunResult result(const std::string& label, int64_t seed, double final_value, double best_value) {
  RunResult r;
  r.run.config_label = label;
  r.run.seed = seed;
  r.status = "finished";
  r.metric = "charts/episode_return_mean";
  r.values = 10;
  r.final_value = final_value;
  r.best_value = best_value;
  return r;
}

PaperTable table() {
  PaperTable t;
  t.id = "x/table1";
  t.scale = 100;
  t.cells = {{"gru/a", PublishedValue{-40, 5}}, {"gru/b", PublishedValue{10, 1}}, {"shm/a", PublishedValue{20, 2}}};
  t.aggregates = {{"GRU", "gru/", {-15, 3}}, {"SHM", "shm/", {20, 2}}};
  return t;
}

}  // namespace

TEST_CASE("reproduce: the interquartile mean is scipy's trim_mean(x, 0.25)", "[sweep]") {
  CHECK(interquartile_mean({3, 1, 2}) == 2);  // n = 3: nothing cut
  // n = 8: the 2 smallest and 2 largest cut: mean of 3, 4, 5, 6.
  CHECK(interquartile_mean({8, 1, 7, 2, 6, 3, 5, 4}) == 4.5);
  CHECK(interquartile_mean({1, 2, 3, 100}) == 2.5);  // n = 4: one cut from each end
  CHECK(std::isnan(interquartile_mean({})));
  const auto [lo, hi] = iqm_confidence_interval({{1, 2, 3, 4, 5, 6, 7, 8}});
  CHECK(lo < 4.5);
  CHECK(hi > 4.5);
  CHECK(lo >= 1);
  CHECK(hi <= 8);
  CHECK(iqm_confidence_interval({{1, 2, 3, 4, 5, 6, 7, 8}}) == std::pair{lo, hi});  // a fixed-seed generator
  CHECK(iqm_confidence_interval({{2, 2, 2}}) == std::pair{2.0, 2.0});
}

TEST_CASE("reproduce: cells and aggregates beside the paper's numbers, with verdicts", "[sweep]") {
  const std::vector<RunResult> results = {
      result("gru/a", 0, -0.40, 0.0), result("gru/a", 1, -0.44, 0.0), result("gru/a", 2, -0.48, 0.0),  // 44 ± 4
      result("gru/b", 0, 0.20, 0.0),  result("gru/b", 1, 0.24, 0.0),  result("gru/b", 2, 0.22, 0.0),   // 22 ± 2
  };
  const auto rows = reproduction_rows(table(), results);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].name == "gru/a");
  CHECK(rows[0].runs == 3);
  CHECK(rows[0].mean == Approx(-44));
  CHECK(rows[0].std == Approx(4));
  CHECK(rows[0].iqm == Approx(-44));
  CHECK(rows[0].verdict == "inside");  // −44 within −40 ± 5
  CHECK(rows[1].mean == Approx(22));
  CHECK(rows[1].verdict == "above");  // 22 above 10 ± 1
  CHECK(rows[2].verdict == "not run");
  // GRU: per seed the average of its two cells: −10, −10, −13 → −11 ± 1.73; IQM over all six runs.
  CHECK(rows[3].aggregate);
  CHECK(rows[3].runs == 6);
  CHECK(rows[3].mean == Approx(-11));
  CHECK(rows[3].std == Approx(std::sqrt(3.0)));
  CHECK(rows[3].verdict == "above");  // −11 above −15 ± 3
  CHECK(rows[4].verdict == "not run (0 of 1 cells)");

  SECTION("a run still training does not count") {
    auto partial = results;
    partial[0].status = "partial";
    const auto r = reproduction_rows(table(), partial);
    CHECK(r[0].runs == 2);
    CHECK(r[0].mean == Approx(-46));
  }
  SECTION("standard errors: ours are shown as s.e. too, and the verdict uses the paper's s.e.") {
    auto t = table();
    t.spread = "se";
    t.decimals = 2;
    t.cells[0].second = PublishedValue{-46, 1};  // −44 ± 4 over 3 seeds: s.e. 4/√3 = 2.31
    const auto r = reproduction_rows(t, results);
    CHECK(r[0].std == Approx(4));
    CHECK(r[0].spread == Approx(4 / std::sqrt(3.0)));
    CHECK(r[0].verdict == "above");  // −44 above −46 ± 1
    const std::string md = reproduction_markdown(t, r, 1, 3);
    CHECK_THAT(md, Catch::Contains("| cell | ours: mean ± s.e. |"));
    CHECK_THAT(md, Catch::Contains("| gru/a | -44.00 ± 2.31 |"));
    CHECK_THAT(md, Catch::Contains("| -46.00 ± 1.00 | above (budget 1) |"));
    CHECK_THAT(reproduction_csv(t, r, 1), Catch::Contains(",-46,1,se,above,1\n"));
  }
  SECTION("a published number without an error bar is checked against our IQM's interval") {
    auto t = table();
    t.cells[0].second = PublishedValue{-45, 0, false};  // inside [−48, −40]
    t.cells[1].second = PublishedValue{30, 0, false};   // higher than all of 20, 22, 24
    const auto r = reproduction_rows(t, results);
    CHECK(r[0].verdict == "inside");
    CHECK(r[1].verdict == "below");
    CHECK_THAT(reproduction_markdown(t, r, 1, 3), Catch::Contains("| 3 | 30.0 | below (budget 1) |"));
    CHECK_THAT(reproduction_csv(t, r, 1), Catch::Contains(",30,,std,below,1\n"));
  }
  SECTION("the best value instead of the final one (MMER)") {
    auto t = table();
    t.statistic = "best";
    CHECK(reproduction_rows(t, results)[0].mean == 0);
  }
  SECTION("the report") {
    const std::string md = reproduction_markdown(table(), rows, 0.1, 3);
    CHECK_THAT(md, Catch::Contains("| gru/a | -44.0 ± 4.0 | -44.0 ["));
    CHECK_THAT(md, Catch::Contains("| 3 | -40.0 ± 5.0 | inside (budget 0.1) |"));
    CHECK_THAT(md, Catch::Contains("| shm/a | – | – | 0 | 20.0 ± 2.0 | not run |"));
    CHECK_THAT(md, Catch::Contains("| **GRU** | -11.0 ± 1.7 |"));
    const std::string csv = reproduction_csv(table(), rows, 0.1);
    CHECK_THAT(csv, Catch::Contains("gru/b,0,3,22,"));
    CHECK_THAT(csv, Catch::Contains(",above,0.1\n"));
  }
}

TEST_CASE("reproduce: every paper table in configs/repro loads and names cells its sweep has", "[sweep]") {
  const char* source = std::getenv("RLM_SOURCE_DIR");
  REQUIRE(source != nullptr);
  int tables = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(source) / "configs" / "repro")) {
    if (!fs::exists(entry.path() / "paper.yaml")) continue;
    INFO(entry.path().string());
    const auto t = load_paper_table(entry.path() / "paper.yaml");
    ++tables;
    const auto runs = expand(load_sweep(t.sweep));
    std::set<std::string> labels;
    for (const auto& r : runs) labels.insert(r.config_label);
    for (const auto& [label, value] : t.cells) CHECK(labels.contains(label));
    CHECK(labels.size() == t.cells.size());
    for (const auto& a : t.aggregates) {
      int n = 0;
      for (const auto& [label, value] : t.cells) n += label.starts_with(a.prefix) ? 1 : 0;
      CHECK(n > 0);
    }
  }
  CHECK(tables >= 1);
}

TEST_CASE("reproduce: malformed paper tables name file, line and key", "[sweep]") {
  const fs::path dir = fs::temp_directory_path() / ("rlm-test-paper-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto error_of = [&](const std::string& text) {
    std::ofstream(dir / "paper.yaml") << text;
    try {
      load_paper_table(dir / "paper.yaml");
    } catch (const rlm::UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string ok = "id: a/b\nsweep: s.yaml\n";
  CHECK_THAT(error_of(ok + "cells: {x: [1, 2, 3]}\n"),
             Catch::Contains("paper.yaml:3: cells.x: must be [mean, spread] or [mean]"));
  CHECK_THAT(error_of(ok + "cells: {x: [1]}\nspread: sem\n"),
             Catch::Contains("paper.yaml:4: spread: must be std or se"));
  CHECK_THAT(error_of(ok + "cells: {x: [1]}\ndecimals: 1.5\n"), Catch::Contains("decimals: must be a whole number"));
  CHECK_THAT(error_of(ok + "cells: {x: [1, -2]}\n"), Catch::Contains("cannot be negative"));
  CHECK_THAT(error_of(ok + "cells: {x: [1, 2]}\nstatistic: max\n"), Catch::Contains("must be final or best"));
  CHECK_THAT(error_of(ok + "cells: {x: [1, 2]}\ntabel: 1\n"), Catch::Contains("paper.yaml:4: tabel: unknown key"));
  CHECK_THAT(error_of("sweep: s.yaml\ncells: {x: [1, 2]}\n"), Catch::Contains("id: is missing"));
  CHECK_THAT(error_of(ok + "cells: {x: [1, 2]}\naggregates: [{name: A}]\n"), Catch::Contains("each aggregate needs"));
  fs::remove_all(dir);
}
