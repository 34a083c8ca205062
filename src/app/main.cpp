// rlm: the command-line entry point. `./rlm` (the repo-root script) sets up, builds and then runs this binary.
#include <fmt/format.h>
#include <malloc.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <new>
#include <string_view>

#include "app/commands.hpp"
#include "app/exit_status.hpp"
#include "core/cpu_isa.hpp"
#include "core/error.hpp"
#include "core/stop_signal.hpp"

namespace {

constexpr const char* kUsage = R"(usage: rlm <command> [options]
  train --config FILE [key.path=value ...]   train a new run (runs/<name>/<timestamp>/)
  train --resume RUN_DIR [key.path=value ...] continue a run from its newest checkpoint
  eval  --run RUN_DIR [--episodes N] [--deterministic] [--checkpoint FILE]
  bench [--quick] [--backends [--paper]] [--concurrent N] [--device D] [--json FILE]
                                            end-to-end PPO throughput (--backends: each memory vs GRU; --paper:
                                            their paper configs; --concurrent: also N runs at once, summed)
  bench sac [--quick] [--updates N] [--threads K] [--pomdp-baselines PATH] [--json FILE]
                                            off-policy updates/s per backend (vs pomdp-baselines)
  bench-memory [--device D] [--sequences N] [--steps T] [--only TYPE] [--json FILE]
                                             scan and memory backends: minibatch fwd+bwd, step latency
  envs                                       list environment ids with their spaces
  sweep --config SWEEP.yaml [--jobs N | --runs-per-gpu N] [--in-process] [--out DIR] [--dry-run]
                                             train every run of a sweep file with N local workers (or N per GPU;
                                             --in-process: as threads of this process)
  sweep --config SWEEP.yaml --emit slurm DIR [--runs-per-gpu N [--in-process]] [--partition P --time T --gpus G
        --cpus C --mem M --concurrency K]    write a Slurm job array of the same runs (N per GPU in each task)
  sweep --config SWEEP.yaml --collect [--metric TAG]
                                             final and best values per group, mean ± std over seeds
  reproduce <paper>/<table> [--budget F] [--seeds N] [--cells A,B] [--jobs N | --runs-per-gpu N]
            [--in-process] [--emit slurm DIR] [--collect]
                                             a paper table's runs, then ours beside the published numbers (--list)
  plot RUN_DIR... --out DIR [--metrics TAG,...]  learning curves (the ./rlm script runs scripts/plot_runs.py)
)";

/// Whether this process trains a run (`train`, a sweep's `--only I` worker or array task, or a sweep that trains its
/// runs on threads of its own, `--in-process`) and so takes SIGINT and SIGTERM as a request to stop through a
/// checkpoint (core/stop_signal.hpp).
bool trains_a_run(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view command = argv[1];
  if (command == "train") return true;
  if (command != "sweep" && command != "reproduce") return false;
  bool trains = false, not_training = false;
  for (int i = 2; i < argc; ++i) {
    const std::string_view arg = argv[i];
    trains = trains || arg == "--only" || arg == "--in-process";
    not_training = not_training || arg == "--dry-run" || arg == "--emit" || arg == "--collect";
  }
  return trains && !not_training;
}

// Run from .preinit_array: before any shared library's initializer, since libtorch's take most of the 0.4 s between
// exec and main, and a SIGTERM then (a sweep stopped just after it started a worker) must still give exit 143.
// Also refuses a deleted working folder, which aborts those initializers.
void install_stop_handlers_first(int argc, char** argv, char** envp) {
  // A shell whose folder was deleted: oneMKL's initializer would abort with "FATAL ERROR: Cannot load
  // libtorch_cpu.so", and every relative path would be meaningless. Only write(2) and _exit here: nothing else is up.
  if (char cwd[4096]; getcwd(cwd, sizeof cwd) == nullptr && errno == ENOENT) {
    static constexpr char kMessage[] =
        "rlm: error: the current folder no longer exists (deleted?); cd to an existing folder and run again\n";
    [[maybe_unused]] const auto written = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
    _exit(2);
  }
  if (!trains_a_run(argc, argv)) return;
  rlm::install_stop_handlers();
  // A sweep's worker: from now on its sweep's forwarded copy of a group signal is recognised (getenv is not set up
  // yet: the variable is read from envp).
  const size_t n = std::strlen(rlm::kSweepParentVariable);
  for (char** e = envp; e != nullptr && *e != nullptr; ++e)
    if (std::strncmp(*e, rlm::kSweepParentVariable, n) == 0 && (*e)[n] == '=') rlm::stop_with_sweep_parent(*e + n + 1);
}
[[gnu::section(".preinit_array"), gnu::used]] void (*const kPreinit)(int, char**, char**) = install_stop_handlers_first;

/// Runs the command that argv names (or prints the usage); main reports what it throws.
int dispatch(int argc, char** argv) {
  const std::map<std::string, std::function<int(const rlm::app::Args&)>> commands = {
      {"train", rlm::app::train_command},         {"eval", rlm::app::eval_command},
      {"bench", rlm::app::bench_command},         {"bench-memory", rlm::app::memory_bench_command},
      {"envs", rlm::app::envs_command},           {"sweep", rlm::app::sweep_command},
      {"reproduce", rlm::app::reproduce_command},
  };
  const auto is_help = [](std::string_view a) { return a == "--help" || a == "-h" || a == "help"; };
  if (argc >= 2 && is_help(argv[1])) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (argc >= 3 && commands.count(argv[1]) != 0 && (is_help(argv[2]) || (argc >= 4 && is_help(argv[3])))) {
    // `rlm sweep --help`, `rlm bench sac --help`: the usage lines of that command (a line naming it, and the
    // lines that continue it), from the one usage text.
    std::string_view usage = kUsage;
    bool in_command = false;
    for (size_t start = 0; start < usage.size();) {
      const size_t end = usage.find('\n', start);
      const std::string_view line = usage.substr(start, end - start);
      start = end == std::string_view::npos ? usage.size() : end + 1;
      if (line.starts_with("  ") && !line.starts_with("   "))
        in_command = line.substr(2).starts_with(argv[1] + std::string(" "));
      if (in_command) fmt::print("{}\n", line);
    }
    return 0;
  }
  if (argc < 2 || commands.count(argv[1]) == 0) {
    std::fputs(kUsage, argc < 2 ? stdout : stderr);
    if (argc >= 2) fmt::print(stderr, "rlm: error: unknown command '{}'\n", argv[1]);
    return argc < 2 ? 0 : 2;
  }
  rlm::apply_max_cpu_isa_to_libraries();  // RLM_MAX_CPU_ISA: before oneDNN, MKL and ATen read their own caps
  return commands.at(argv[1])(rlm::app::Args(argv + 2, argv + argc));
}

}  // namespace

int main(int argc, char** argv) {
  rlm::start_stop_signal_thread();  // signals sent since start-up (blocked in preinit) are handled from here on
  // Large tensors (rollout batches, scan outputs) are fresh allocations on the CPU; backing them with transparent huge
  // pages avoids most of the first-touch page faults (measured: linear_scan's [1024, 64, 1024] output 375 -> 165 ms).
  // c10 reads this once, at the first allocation; an explicit setting in the environment wins.
  setenv("THP_MEM_ALLOC_ENABLE", "1", /*overwrite=*/0);
  // Keep freed blocks of every size in the heap, never mapped and unmapped on their own, and trim the heap only above
  // 1 GB free: a PPO update frees and reallocates the same activations and gradients every minibatch, and each block
  // glibc mapped came back from the kernel as fresh pages to be zeroed. With glibc's defaults that was 10% of a CPU
  // update in perf's clear_page_erms; with blocks up to 32 MB (its largest mmap threshold) kept, STM at the paper's
  // sizes still mapped its 46 MB per-step tensors afresh: a third of its update in the kernel (sys 27 of 79 s),
  // and 56 -> 33 s per epoch after the first without it (configs/stm_popgym.yaml, 1 thread). Peak memory there: 6.6 ->
  // 7.9 GB.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  try {
    return dispatch(argc, argv);
  } catch (...) {
    return rlm::app::report_exception(std::current_exception(), stderr);
  }
}
