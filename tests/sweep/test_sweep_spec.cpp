// Sweep files: what each key expands to, the run order (= the Slurm array index), run ids, and the errors.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/error.hpp"
#include "sweep/sweep_spec.hpp"

namespace fs = std::filesystem;
using rlm::sweep::expand;
using rlm::sweep::load_sweep;

namespace {

/// A folder with configs/a.yaml, configs/sub/b.yaml and the sweep file given.
struct SweepFolder {
  fs::path dir;
  explicit SweepFolder(const std::string& name) {
    dir = fs::temp_directory_path() / ("rlm-test-sweep-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "configs" / "sub");
    std::ofstream(dir / "configs" / "a.yaml") << "env:\n  id: popgym/RepeatFirstEasy\n";
    std::ofstream(dir / "configs" / "sub" / "b.yaml") << "env:\n  id: popgym/RepeatFirstEasy\n";
  }
  ~SweepFolder() { fs::remove_all(dir); }
  fs::path write(const std::string& text) const {
    const fs::path file = dir / "sweep.yaml";
    std::ofstream(file) << text;
    return file;
  }
};

std::string error_of(const fs::path& file) {
  try {
    expand(load_sweep(file));
  } catch (const rlm::UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sweep: a grid times seeds, in order, with ids that say what each run sets", "[sweep]") {
  SweepFolder folder("grid");
  const auto file = folder.write(
      "configs: configs/a.yaml\n"
      "overrides: {algo.total_steps: 1000}\n"
      "grid:\n"
      "  algo.lr: [0.001, 0.0003]\n"
      "  model.memory.type: [gru, ffm]\n"
      "seeds: 2\n");
  const auto spec = load_sweep(file);
  CHECK(spec.name == "sweep");
  const auto runs = expand(spec);
  REQUIRE(runs.size() == 8);
  // The last grid key varies fastest, then the seeds.
  CHECK(runs[0].id == "a__algo.lr=0.001__model.memory.type=gru__seed=0");
  CHECK(runs[1].id == "a__algo.lr=0.001__model.memory.type=gru__seed=1");
  CHECK(runs[2].id == "a__algo.lr=0.001__model.memory.type=ffm__seed=0");
  CHECK(runs[7].id == "a__algo.lr=0.0003__model.memory.type=ffm__seed=1");
  for (int i = 0; i < 8; ++i) CHECK(runs[static_cast<size_t>(i)].index == i);
  CHECK(runs[3].overrides == std::vector<std::string>{"algo.total_steps=1000", "algo.lr=0.001", "model.memory.type=ffm",
                                                      "experiment.seed=1"});
  CHECK(runs[3].swept ==
        std::vector<std::pair<std::string, std::string>>{{"algo.lr", "0.001"}, {"model.memory.type", "ffm"}});
  CHECK(runs[3].seed == 1);
  CHECK(fs::equivalent(runs[3].config, folder.dir / "configs" / "a.yaml"));
}

TEST_CASE("sweep: configs by glob, list entries crossed with the grid, seeds as a list", "[sweep]") {
  SweepFolder folder("list");
  const auto file = folder.write(
      "name: mixed\n"
      "configs: [configs/*.yaml, configs/sub/*.yaml]\n"
      "list:\n"
      "  - {algo.lr: 0.001, model.off_policy.actor_layers: [64, 64]}\n"
      "  - {algo.lr: 0.01}\n"
      "grid: {algo.gamma: [0.9]}\n"
      "seeds: [3, 7]\n");
  const auto runs = expand(load_sweep(file));
  REQUIRE(runs.size() == 2 * 2 * 1 * 2);
  CHECK(runs[0].config_label == "a");
  CHECK(runs[4].config_label == "sub/b");
  CHECK(runs[0].id == "a__algo.lr=0.001__model.off_policy.actor_layers=-64-64-__algo.gamma=0.9__seed=3");
  CHECK(runs[0].overrides[1] == "model.off_policy.actor_layers=[64, 64]");  // a list value in flow style
  CHECK(runs[5].id == "sub-b__algo.lr=0.001__model.off_policy.actor_layers=-64-64-__algo.gamma=0.9__seed=7");
  CHECK(runs[7].seed == 7);
}

TEST_CASE("sweep: a config entry can be a variant of a file with its own label and overrides", "[sweep]") {
  SweepFolder folder("entries");
  const auto file = folder.write(
      "configs:\n"
      "  - {file: configs/a.yaml, label: a_easy}\n"
      "  - {file: configs/a.yaml, label: a_hard, overrides: {env.id: popgym/RepeatFirstHard}}\n"
      "overrides: {algo.total_steps: 10}\n"
      "seeds: 1\n");
  const auto runs = expand(load_sweep(file));
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].id == "a_easy__seed=0");
  CHECK(runs[1].config_label == "a_hard");
  CHECK(runs[1].overrides ==
        std::vector<std::string>{"algo.total_steps=10", "env.id=popgym/RepeatFirstHard", "experiment.seed=0"});
  CHECK_THAT(error_of(folder.write("configs: [{label: x}]\n")), Catch::Contains("needs file"));
  CHECK_THAT(error_of(folder.write("configs: [{file: configs/*}]\n")), Catch::Contains("must name exactly one file"));
  CHECK_THAT(error_of(folder.write("configs: [{file: configs/a.yaml, lable: x}]\n")),
             Catch::Contains("configs.lable: unknown key"));
  CHECK_THAT(error_of(folder.write("configs: [{file: configs/a.yaml, label: x}, {file: configs/a.yaml, label: x}]\n")),
             Catch::Contains("share the folder"));
}

TEST_CASE("sweep: random samples are reproducible and inside their distributions", "[sweep]") {
  SweepFolder folder("random");
  const auto file = folder.write(
      "configs: configs/a.yaml\n"
      "random:\n"
      "  samples: 20\n"
      "  seed: 4\n"
      "  params:\n"
      "    algo.lr: {log_uniform: [1.0e-5, 1.0e-3]}\n"
      "    algo.ent_coef: {uniform: [0, 0.02]}\n"
      "    algo.epochs: {int_uniform: [2, 4]}\n"
      "    model.memory.type: {choice: [gru, ffm]}\n");
  const auto a = expand(load_sweep(file)), b = expand(load_sweep(file));
  REQUIRE(a.size() == 20);
  std::set<std::string> types, epochs;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].id == b[i].id);
    REQUIRE(a[i].swept.size() == 4);
    const double lr = std::stod(a[i].swept[0].second), ent = std::stod(a[i].swept[1].second);
    CHECK(lr >= 1e-5);
    CHECK(lr <= 1e-3);
    CHECK(ent >= 0);
    CHECK(ent <= 0.02);
    epochs.insert(a[i].swept[2].second);
    types.insert(a[i].swept[3].second);
  }
  CHECK(epochs == std::set<std::string>{"2", "3", "4"});
  CHECK(types == std::set<std::string>{"gru", "ffm"});
}

TEST_CASE("sweep: malformed sweep files name the file, line and key", "[sweep]") {
  SweepFolder folder("errors");
  const auto dir = folder.dir.string();
  CHECK_THAT(error_of(folder.write("grid: {algo.lr: [1]}\n")), Catch::Contains("configs: is missing"));
  CHECK_THAT(error_of(folder.write("configs: configs/nothing*.yaml\n")),
             Catch::Contains("sweep.yaml:1: configs: 'configs/nothing*.yaml' matches no file"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\ngrid:\n  algo.lr: []\n")),
             Catch::Contains("sweep.yaml:3: grid.algo.lr: must be a non-empty list"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nseed: 3\n")),
             Catch::Contains("sweep.yaml:2: seed: unknown key"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nseeds: [1, 1]\n")), Catch::Contains("a seed twice"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nseeds: 0\n")), Catch::Contains("seeds: must be"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nrandom: {samples: 2, params: {algo.lr: {normal: [0, "
                                   "1]}}}\n")),
             Catch::Contains("unknown distribution 'normal'"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nrandom: {samples: 2, params: {algo.lr: {log_uniform: "
                                   "[0, 1]}}}\n")),
             Catch::Contains("log_uniform bounds must be positive"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nslurm: {gpu: 1}\n")),
             Catch::Contains("slurm.gpu: unknown key"));
  // One value listed twice, in any spelling, is refused where it is written (issue 30, item 17); two values that
  // differ only in characters a folder name cannot hold still meet at the folder.
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\ngrid: {algo.lr: [1, 1]}\n")),
             Catch::Contains("sweep.yaml:2: grid.algo.lr: lists the value 1 twice ('1' and '1')"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\ngrid:\n  algo.lr: [0.1, 0.2, 1e-1]\n")),
             Catch::Contains("sweep.yaml:3: grid.algo.lr: lists the value 0.1 twice ('0.1' and '1e-1')"));
  CHECK(error_of(folder.write("configs: configs/a.yaml\ngrid: {algo.lr: [0.1, 0.11]}\n")).empty());
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\ngrid: {experiment.name: [a b, a-b]}\n")),
             Catch::Contains("share the folder"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nrandom: {samples: 2, params: {algo.lr: {uniform: "
                                   "[0, .inf]}}}\n")),
             Catch::Contains("random.params.algo.lr.uniform: bounds must be finite numbers, got [0, inf]"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nrandom: {samples: 2, params: {algo.epochs: "
                                   "{int_uniform: [1, 1e300]}}}\n")),
             Catch::Contains("int_uniform bounds must lie within"));
  CHECK_THAT(error_of(folder.write("configs: configs/a.yaml\nname: a/b\n")), Catch::Contains("not a folder name"));
  CHECK_THAT(error_of(folder.write("configs: [configs/a.yaml\n")), Catch::Contains("malformed YAML"));
  CHECK_THAT(error_of(folder.dir / "absent.yaml"), Catch::Contains("not found"));
}
