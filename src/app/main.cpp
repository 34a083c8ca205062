// rlm: the command-line entry point. `./rlm` (the repo-root script) sets up, builds and then runs this binary.
#include <fmt/format.h>
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <functional>

#include "app/commands.hpp"
#include "core/error.hpp"

namespace {

constexpr const char* kUsage = R"(usage: rlm <command> [options]
  train --config FILE [key.path=value ...]   train a new run (runs/<name>/<timestamp>/)
  train --resume RUN_DIR [key.path=value ...] continue a run from its newest checkpoint
  eval  --run RUN_DIR [--episodes N] [--deterministic] [--checkpoint FILE]
  bench [--quick] [--device D] [--json FILE] end-to-end PPO throughput
  envs                                       list environment ids with their spaces
)";

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, std::function<int(const rlm::app::Args&)>> commands = {
      {"train", rlm::app::train_command},
      {"eval", rlm::app::eval_command},
      {"bench", rlm::app::bench_command},
      {"envs", rlm::app::envs_command},
  };
  if (argc < 2 || commands.count(argv[1]) == 0) {
    std::fputs(kUsage, argc < 2 ? stdout : stderr);
    if (argc >= 2) fmt::print(stderr, "rlm: error: unknown command '{}'\n", argv[1]);
    return argc < 2 ? 0 : 2;
  }
  const rlm::app::Args args(argv + 2, argv + argc);
  try {
    return commands.at(argv[1])(args);
  } catch (const rlm::UsageError& e) {
    fmt::print(stderr, "rlm: error: {}\n", first_line(e.what()));
    return 2;
  } catch (const rlm::EnvError& e) {
    fmt::print(stderr, "rlm: error: {}\n", first_line(e.what()));
    return 2;
  } catch (const rlm::CheckpointError& e) {
    fmt::print(stderr, "rlm: error: {}\n", first_line(e.what()));
    return 3;
  } catch (const c10::Error& e) {
    fmt::print(stderr, "rlm: error: {}\n", first_line(e.what_without_backtrace()));
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "rlm: error: {}\n", first_line(e.what()));
    return 1;
  }
}
