// Run-folder files: atomic writes, TensorBoard event files (read back by the real tensorboard package), metrics
// JSONL/CSV across resumes, and the console progress line.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/metrics_logger.hpp"
#include "core/progress.hpp"
#include "core/tensorboard_writer.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("rlm_test_log_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> file_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

// Single quotes for the shell, with embedded ones closed, escaped and reopened.
std::string shell_quote(const fs::path& path) {
  std::string quoted = "'";
  for (char c : path.string()) {
    if (c == '\'') {
      quoted.append("'\\''");
    } else {
      quoted.push_back(c);
    }
  }
  quoted.push_back('\'');
  return quoted;
}

struct CommandResult {
  int status;
  std::string out;
  std::string err;
};

// Runs `python scripts/tb_readback.py dir`, the same reader TensorBoard uses, so our hand-encoded events are judged
// by TensorBoard itself rather than by a decoder written alongside the encoder.
CommandResult tb_readback(const fs::path& dir) {
  const fs::path repo = env_or("RLM_SOURCE_DIR", fs::current_path().string());
  const fs::path python = env_or("RLM_PYTHON", (repo / ".venv" / "bin" / "python").string());
  const fs::path script = repo / "scripts" / "tb_readback.py";
  if (!fs::exists(python)) {
    FAIL("python not found at '" << python.string()
                                 << "': create the project venv with tensorboard, or set RLM_PYTHON to a python that "
                                    "has it (and RLM_SOURCE_DIR to the repository root)");
  }
  if (!fs::exists(script)) FAIL("'" << script.string() << "' not found: set RLM_SOURCE_DIR to the repository root");

  const fs::path err_path = dir.parent_path() / (dir.filename().string() + ".stderr");
  std::string command;
  for (const fs::path& word : {python, script, dir}) command.append(shell_quote(word)).append(" ");
  command.append("2>").append(shell_quote(err_path));
  CommandResult result{-1, "", ""};
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) FAIL("cannot run: " << command);
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) result.out.append(buffer, n);
  result.status = ::pclose(pipe);
  result.err = read_text(err_path);
  fs::remove(err_path);
  return result;
}

nlohmann::json tb_scalars(const fs::path& dir) {
  const CommandResult result = tb_readback(dir);
  INFO("tb_readback.py stderr: " << result.err);
  if (result.status != 0 && result.err.find("tensorboard") != std::string::npos &&
      result.err.find("cannot import") != std::string::npos)
    FAIL("the python used by this test has no tensorboard package (pip install tensorboard): " << result.err);
  REQUIRE(result.status == 0);
  return nlohmann::json::parse(result.out);
}

}  // namespace

// ---- write_file_atomic ----

TEST_CASE("write_file_atomic writes the exact bytes and leaves no temp file", "[logging]") {
  TempDir dir;
  const fs::path path = dir.path / "eval.json";
  rlm::write_file_atomic(path, "first version, long enough to be longer than the second");
  rlm::write_file_atomic(path, std::string("second\0version", 14));
  CHECK(read_text(path) == std::string("second\0version", 14));
  rlm::write_file_atomic(path, "");
  CHECK(fs::exists(path));
  CHECK(fs::file_size(path) == 0);
  CHECK(file_names(dir.path) == std::vector<std::string>{"eval.json"});
}

TEST_CASE("write_file_atomic failures throw and leave nothing behind", "[logging]") {
  TempDir dir;
  SECTION("missing folder") {
    const fs::path path = dir.path / "no_such_folder" / "ckpt.bin";
    try {
      rlm::write_file_atomic(path, "data");
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      CHECK_THAT(e.what(), Catch::Contains(path.string()) && Catch::Contains("No such file or directory"));
    }
    CHECK_FALSE(fs::exists(dir.path / "no_such_folder"));
    CHECK(file_names(dir.path).empty());
  }
  SECTION("rename over a folder fails after the temp file was written") {
    fs::create_directory(dir.path / "occupied");
    fs::create_directory(dir.path / "occupied" / "child");  // non-empty, so rename() cannot replace it
    CHECK_THROWS_WITH(rlm::write_file_atomic(dir.path / "occupied", "data"),
                      Catch::Contains("occupied") && Catch::Contains("rename"));
    CHECK(file_names(dir.path) == std::vector<std::string>{"occupied"});
    CHECK(fs::is_directory(dir.path / "occupied" / "child"));
  }
}

// ---- TensorBoardWriter ----

TEST_CASE("TensorBoardWriter event files read back with the tensorboard package", "[logging]") {
  TempDir dir;
  const fs::path log_dir = dir.path / "tb";
  const std::map<std::string, std::vector<std::pair<int64_t, double>>> expected = {
      {"charts/episode_return_mean", {{0, 0.5}, {128, -3.25}, {256, 1e6}, {5'000'000'000, 0.421}}},
      {"losses/policy_loss", {{128, -0.0123}, {256, 3.5e-8}}},
      {"charts/sps", {{1, 12345.0}}},
  };
  {
    rlm::TensorBoardWriter writer(log_dir);
    CHECK(writer.path().parent_path() == log_dir);
    CHECK(writer.path().filename().string().rfind("events.out.tfevents.", 0) == 0);
    for (const auto& [tag, points] : expected)
      for (const auto& [step, value] : points) writer.add_scalar(tag, value, step, 1.7e9 + static_cast<double>(step));
    // Flushed after each add: readable while the writer is still open, as during a live run.
    const nlohmann::json live = tb_scalars(log_dir);
    CHECK(live.size() == expected.size());
  }

  const nlohmann::json scalars = tb_scalars(log_dir);
  REQUIRE(scalars.size() == expected.size());
  for (const auto& [tag, points] : expected) {
    INFO("tag " << tag);
    REQUIRE(scalars.contains(tag));
    const nlohmann::json& read = scalars.at(tag);
    REQUIRE(read.size() == points.size());
    for (size_t i = 0; i < points.size(); ++i) {
      CHECK(read[i][0].get<int64_t>() == points[i].first);
      CHECK(read[i][1].get<double>() == Approx(static_cast<float>(points[i].second)).epsilon(1e-7));
    }
  }
}

TEST_CASE("TensorBoardWriter checksums are verified by the reader", "[logging]") {
  TempDir dir;
  fs::path event_file;
  {
    rlm::TensorBoardWriter writer(dir.path);
    writer.add_scalar("charts/a", 1.0, 1);
    writer.add_scalar("charts/a", 2.0, 2);
    event_file = writer.path();
  }
  // Flip one bit in the last record's payload: a correct reader must now reject that record.
  std::string bytes = read_text(event_file);
  bytes[bytes.size() - 6] = static_cast<char>(bytes[bytes.size() - 6] ^ 0x01);
  std::ofstream(event_file, std::ios::binary | std::ios::trunc) << bytes;
  const CommandResult result = tb_readback(dir.path);
  CHECK(result.status != 0);
  CHECK_THAT(result.err, Catch::Contains("corrupt record"));
}

TEST_CASE("two TensorBoardWriters in one folder never share a file", "[logging]") {
  TempDir dir;
  rlm::TensorBoardWriter first(dir.path);
  rlm::TensorBoardWriter second(dir.path);
  CHECK(first.path() != second.path());
}

// ---- MetricsLogger ----

TEST_CASE("MetricsLogger writes JSONL and CSV rows", "[logging]") {
  TempDir dir;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  {
    rlm::MetricsLogger logger(dir.path, /*tensorboard=*/false);
    logger.log(128, {{"charts/episode_return_mean", 0.5}, {"losses/policy_loss", -3.25}});
    logger.log(256, {{"losses/policy_loss", 1e6}});  // missing tag
    logger.log(384, {{"charts/episode_return_mean", nan},
                     {"charts/new_tag", 7.0},  // new tag, NaN
                     {"losses/policy_loss", 0.1}});
    // Flushed per call: the rows are on disk while the logger is still open.
    CHECK(read_lines(dir.path / "metrics.jsonl").size() == 3);
  }
  CHECK(read_lines(dir.path / "metrics.jsonl") ==
        std::vector<std::string>{
            R"({"step":128,"charts/episode_return_mean":0.5,"losses/policy_loss":-3.25})",
            R"({"step":256,"losses/policy_loss":1000000.0})",
            R"({"step":384,"charts/episode_return_mean":null,"charts/new_tag":7.0,"losses/policy_loss":0.1})",
        });
  CHECK(read_lines(dir.path / "metrics.csv") == std::vector<std::string>{
                                                    "step,charts/episode_return_mean,losses/policy_loss",
                                                    "128,0.5,-3.25",
                                                    "256,,1000000",
                                                    "384,nan,0.1",
                                                });
  CHECK(file_names(dir.path) == std::vector<std::string>{"metrics.csv", "metrics.jsonl"});
}

TEST_CASE("MetricsLogger resumes by appending under the existing CSV header", "[logging]") {
  TempDir dir;
  {
    rlm::MetricsLogger logger(dir.path, false);
    logger.log(1, {{"a", 1.0}, {"b", 2.0}});
  }
  {
    rlm::MetricsLogger logger(dir.path, false);
    logger.log(2, {{"b", 20.0}, {"c", 30.0}, {"a", 10.0}});  // other order, one new tag
  }
  CHECK(read_lines(dir.path / "metrics.csv") == std::vector<std::string>{"step,a,b", "1,1,2", "2,10,20"});
  const std::vector<std::string> jsonl = read_lines(dir.path / "metrics.jsonl");
  REQUIRE(jsonl.size() == 2);
  CHECK(nlohmann::json::parse(jsonl[1]) == nlohmann::json{{"step", 2}, {"a", 10.0}, {"b", 20.0}, {"c", 30.0}});
}

TEST_CASE("MetricsLogger drops a row cut short by a crash before appending", "[logging]") {
  TempDir dir;
  {
    rlm::MetricsLogger logger(dir.path, false);
    logger.log(1, {{"a", 1.0}});
  }
  std::ofstream(dir.path / "metrics.jsonl", std::ios::app) << R"({"step":2,"a":)";
  std::ofstream(dir.path / "metrics.csv", std::ios::app) << "2,";
  {
    rlm::MetricsLogger logger(dir.path, false);
    logger.log(2, {{"a", 2.0}});
  }
  CHECK(read_lines(dir.path / "metrics.jsonl") ==
        std::vector<std::string>{R"({"step":1,"a":1.0})", R"({"step":2,"a":2.0})"});
  CHECK(read_lines(dir.path / "metrics.csv") == std::vector<std::string>{"step,a", "1,1", "2,2"});
}

TEST_CASE("MetricsLogger::truncate_after keeps rows up to the checkpoint step", "[logging]") {
  TempDir dir;
  {
    rlm::MetricsLogger logger(dir.path, false);
    for (int64_t step = 100; step <= 500; step += 100) logger.log(step, {{"a", static_cast<double>(step) / 100}});
  }
  rlm::MetricsLogger::truncate_after(dir.path, 300);
  CHECK(read_lines(dir.path / "metrics.csv") == std::vector<std::string>{"step,a", "100,1", "200,2", "300,3"});
  CHECK(read_lines(dir.path / "metrics.jsonl") ==
        std::vector<std::string>{R"({"step":100,"a":1.0})", R"({"step":200,"a":2.0})", R"({"step":300,"a":3.0})"});
  CHECK(file_names(dir.path) == std::vector<std::string>{"metrics.csv", "metrics.jsonl"});

  // The resumed run repeats step 400 exactly once.
  {
    rlm::MetricsLogger logger(dir.path, false);
    logger.log(400, {{"a", 4.5}});
  }
  CHECK(read_lines(dir.path / "metrics.csv").back() == "400,4.5");
  CHECK(read_lines(dir.path / "metrics.csv").size() == 5);

  rlm::MetricsLogger::truncate_after(dir.path, 0);  // header survives even when no row does
  CHECK(read_lines(dir.path / "metrics.csv") == std::vector<std::string>{"step,a"});
  CHECK(read_text(dir.path / "metrics.jsonl").empty());

  TempDir empty;
  rlm::MetricsLogger::truncate_after(empty.path, 10);  // a fresh run folder: nothing to do, nothing created
  CHECK(file_names(empty.path).empty());
}

TEST_CASE("MetricsLogger with tensorboard writes an event file TensorBoard reads", "[logging]") {
  TempDir dir;
  {
    rlm::MetricsLogger logger(dir.path, /*tensorboard=*/true);
    logger.log(64, {{"charts/episode_return_mean", 0.25}, {"losses/value_loss", 2.0}});
    logger.log(128, {{"charts/episode_return_mean", 0.75}});
  }
  const nlohmann::json scalars = tb_scalars(dir.path);
  CHECK(scalars == nlohmann::json::parse(R"({"charts/episode_return_mean": [[64, 0.25], [128, 0.75]],
                                                "losses/value_loss": [[64, 2.0]]})"));
}

// ---- progress line ----

TEST_CASE("format_duration", "[logging]") {
  CHECK(rlm::format_duration(0) == "0s");
  CHECK(rlm::format_duration(42) == "42s");
  CHECK(rlm::format_duration(42.4) == "42s");
  CHECK(rlm::format_duration(59.6) == "1m00s");
  CHECK(rlm::format_duration(20 * 60 + 13) == "20m13s");
  CHECK(rlm::format_duration(3600 + 2 * 60 + 59) == "1h02m");
  CHECK(rlm::format_duration(49 * 3600) == "49h00m");
  CHECK(rlm::format_duration(-1) == "-");
  CHECK(rlm::format_duration(std::numeric_limits<double>::infinity()) == "-");
  CHECK(rlm::format_duration(std::nan("")) == "-");
  CHECK(rlm::format_duration(1e30) == ">99999h");
}

TEST_CASE("format_progress", "[logging]") {
  CHECK(rlm::format_count(0) == "0");
  CHECK(rlm::format_count(999) == "999");
  CHECK(rlm::format_count(131072) == "131,072");
  CHECK(rlm::format_count(-15000000) == "-15,000,000");
  // 14,868,928 steps left at 12,300 steps/s = 1208.9 s.
  CHECK(rlm::format_progress(131072, 15'000'000, 12300, 0.421, 1285) ==
        "[train] 131,072/15,000,000 steps (0.9%) | 12.3k steps/s | return 0.421 (1285 eps) | ETA 20m09s");
  CHECK(rlm::format_progress(0, 1000, 0, std::nan(""), 0) ==
        "[train] 0/1,000 steps (0.0%) | 0 steps/s | return - (0 eps) | ETA -");
  CHECK(rlm::format_progress(1000, 1000, 2.5e6, -1.5, 7) ==
        "[train] 1,000/1,000 steps (100.0%) | 2.50M steps/s | return -1.500 (7 eps) | ETA 0s");
}

TEST_CASE("ProgressLine prints one line per update when not on a terminal", "[logging]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  {
    rlm::ProgressLine disabled(100, false, out);
    disabled.update(10, 5, 1.0, 1);
    disabled.finish();
  }
  {
    rlm::ProgressLine progress(100, true, out);
    progress.update(10, 5, 1.0, 1);
    progress.update(20, 5, std::nan(""), 1);
    progress.finish();
  }
  std::rewind(out);
  std::string text;
  char buffer[1024];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), out)) > 0;) text.append(buffer, n);
  std::fclose(out);
  CHECK(text ==
        "[train] 10/100 steps (10.0%) | 5 steps/s | return 1.000 (1 eps) | ETA 18s\n"
        "[train] 20/100 steps (20.0%) | 5 steps/s | return - (1 eps) | ETA 16s\n");
}

TEST_CASE("ProgressLine phase lines show where an iteration is, throttled into files", "[logging]") {
  std::FILE* out = std::tmpfile();
  REQUIRE(out);
  int built = 0;
  {
    rlm::ProgressLine every(100, true, out, /*file_phase_seconds=*/0.0);
    every.phase([&] { return ++built, std::string("iter 1: rollout 5/50 steps"); });
    every.update(50, 5, 1.0, 1);
    every.phase([&] { return ++built, std::string("iter 2: update epoch 1/3, minibatch 2/4"); });
    rlm::ProgressLine throttled(100, true, out, /*file_phase_seconds=*/3600.0);
    throttled.phase([&] { return ++built, std::string("never shown"); });
  }
  std::rewind(out);
  std::string text;
  char buffer[1024];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), out)) > 0;) text.append(buffer, n);
  std::fclose(out);
  CHECK(built == 2);  // the throttled line's text is not even built
  CHECK(text ==
        "[train] 0/100 steps (0.0%) | 0 steps/s | return - (0 eps) | ETA - | iter 1: rollout 5/50 steps\n"
        "[train] 50/100 steps (50.0%) | 5 steps/s | return 1.000 (1 eps) | ETA 10s\n"
        "[train] 50/100 steps (50.0%) | 5 steps/s | return 1.000 (1 eps) | ETA 10s | iter 2: update epoch 1/3, "
        "minibatch 2/4\n");
}

TEST_CASE("MetricsLogger::truncate_after also truncates the TensorBoard event files", "[logging]") {
  TempDir dir;
  {
    rlm::MetricsLogger first(dir.path, /*tensorboard=*/true);
    for (int64_t step : {10, 20, 30, 40}) first.log(step, {{"charts/a", static_cast<double>(step)}});
  }
  // A second process crashed while writing a scalar: its event file ends in half a record.
  fs::path crashed;
  {
    rlm::TensorBoardWriter writer(dir.path);
    writer.add_scalar("charts/a", 50.0, 50);
    crashed = writer.path();
  }
  const auto size = fs::file_size(crashed);
  fs::resize_file(crashed, size - 5);

  // Resumed from the checkpoint at step 20: the steps after it will be logged again.
  rlm::MetricsLogger::truncate_after(dir.path, 20);
  {
    rlm::MetricsLogger resumed(dir.path, /*tensorboard=*/true);
    for (int64_t step : {30, 40, 50}) resumed.log(step, {{"charts/a", static_cast<double>(step)}});
  }
  const nlohmann::json scalars = tb_scalars(dir.path);
  REQUIRE(scalars.contains("charts/a"));
  std::vector<int64_t> steps;
  for (const auto& point : scalars.at("charts/a")) steps.push_back(point[0].get<int64_t>());
  std::sort(steps.begin(), steps.end());
  CHECK(steps == std::vector<int64_t>{10, 20, 30, 40, 50});  // each step once
  // The crashed file keeps its file-version record only, and reads back cleanly.
  CHECK(fs::file_size(crashed) < size - 5);
  CHECK(tb_readback(dir.path).status == 0);
}
