// `rlm bench [--quick] [--backends [--paper]] [--concurrent N] [--device D] [--json FILE]`: end-to-end PPO throughput
// (`rlm bench sac`: sac_bench_command.cpp) (env steps per second, rollout + update) on this machine for the
// learning-test config and the POPGym paper config; with --backends, the learning-test config once per memory backend
// (model.memory.type overridden, everything else equal) and each one's speed relative to the GRU's; with --paper, each
// backend's own PPO paper config instead (configs/<type>_popgym.yaml, the GRU's configs/popgym/repeat_first.yaml),
// timed over its second iteration (the first pays for warm-up: allocations, cuDNN and kernel selection). With
// --concurrent N, every case also runs as N processes at once (`rlm bench ... --case I`, one case each): their summed
// env steps/s is what N runs sharing the machine (or one GPU) reach together. Timing lives here, never in tests.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agents/experiment_config.hpp"
#include "agents/trainer.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "app/source_dir.hpp"
#include "app/subprocess.hpp"
#include "core/atomic_file.hpp"
#include "core/cpu_isa.hpp"
#include "core/cpu_share.hpp"
#include "memory/registry.hpp"
#include "nn/linear.hpp"

namespace rlm::app {
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name, config;
  int iterations, torch_threads;  ///< torch_threads 0: the config's
  std::string memory_type = "";   ///< "" keeps the config's
  std::string cpu_matmul = "fp32";
  std::string cpu_gemm = "";         ///< "onednn" or "mkl" for the CPU's float32 products; "" keeps the default
  bool last_iteration_rate = false;  ///< the figure is the last iteration's env steps/s, not the whole run's
  bool cuda_graphs = true;           ///< experiment.cuda_graphs (acting replayed from a CUDA graph on a GPU)
};

/// A positive count flag (`--NAME N`), or nullopt when absent.
std::optional<int> positive_flag(const ParsedArgs& parsed, const char* name) {
  const auto v = parsed.get(name);
  if (!v) return std::nullopt;
  const auto n = parse_integer(*v);
  if (!n || *n < 1 || *n > 1024) throw UsageError(fmt::format("--{} {}: not a count from 1 to 1024", name, *v));
  return static_cast<int>(*n);
}

/// The last iteration's charts/steps_per_second in a run folder's metrics.jsonl.
double last_iteration_rate(const fs::path& run_dir) {
  std::ifstream in(run_dir / "metrics.jsonl");
  double rate = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto row = nlohmann::json::parse(line);
    if (row.contains("charts/steps_per_second")) rate = row.at("charts/steps_per_second").get<double>();
  }
  return rate;
}

/// This bench's arguments without --concurrent and --json, for a child that runs one case (`--case I`, which the
/// parent never has).
std::vector<std::string> child_arguments(const Args& args) {
  std::vector<std::string> out = {fs::canonical("/proc/self/exe").string(), "bench"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--concurrent" || args[i] == "--json") {
      ++i;
      continue;
    }
    out.push_back(args[i]);
  }
  return out;
}

}  // namespace

int bench_command(const Args& args) {
  if (!args.empty() && args[0] == "sac") return sac_bench_command(Args(args.begin() + 1, args.end()));
  const auto parsed = parse_args(args, {"json", "device", "concurrent", "case"}, {"quick", "backends", "paper"}, false);
  const bool quick = parsed.has("quick");
  const bool backends = parsed.has("backends");
  const bool paper = parsed.has("paper");
  if (paper && !backends) throw UsageError("--paper goes with --backends: each backend's own paper config");
  const auto concurrent = positive_flag(parsed, "concurrent");
  if (concurrent && *concurrent < 2) throw UsageError("--concurrent N: N runs at once, at least 2");
  const std::string device = parsed.get("device").value_or("cpu");
  const bool cpu = device == "cpu";
  // Whole iterations (rollout + update), so the figure is what a training run sees.
  std::vector<Case> cases = {{"learning-test config, 1 torch thread", "configs/gru_repeat_first.yaml", 5, 1},
                             {"learning-test config, 2 torch threads", "configs/gru_repeat_first.yaml", 5, 2},
                             {"POPGym paper config, 1 torch thread", "configs/popgym/repeat_first.yaml", 1, 1},
                             {"POPGym paper config, 2 torch threads", "configs/popgym/repeat_first.yaml", 1, 2}};
  // Which library's float32 GEMMs are faster depends on the CPU (nn/linear.hpp): the 1-thread cases again with the
  // library this CPU does not use by default, side by side.
  if (cpu && at::hasMKLDNN()) {
    const std::string other = nn::onednn_linear_enabled() ? "mkl" : "onednn";
    for (const auto i : {0, 2}) {
      Case c = cases[static_cast<size_t>(i)];
      c.name += other == "mkl" ? ", MKL" : ", oneDNN";
      c.cpu_gemm = other;
      cases.push_back(c);
    }
  }
  // bf16 products beside the same config in fp32, where this CPU has them (experiment.cpu_matmul).
  if (cpu && nn::cpu_has_native_bf16())
    cases.push_back({"POPGym paper config, 1 thread, bf16", "configs/popgym/repeat_first.yaml", 1, 1, "", "bf16"});
  // On a GPU: acting replayed from a CUDA graph (the default) beside eager acting, the paper config's second
  // iteration (the first includes the capture).
  if (!cpu) {
    cases.push_back({.name = "POPGym paper config, graph acting",
                     .config = "configs/popgym/repeat_first.yaml",
                     .iterations = 2,
                     .torch_threads = 0,
                     .last_iteration_rate = true});
    cases.push_back({.name = "POPGym paper config, eager acting",
                     .config = "configs/popgym/repeat_first.yaml",
                     .iterations = 2,
                     .torch_threads = 0,
                     .last_iteration_rate = true,
                     .cuda_graphs = false});
  }
  if (quick) cases.resize(1);
  if (backends) {
    cases.clear();
    auto types = memory::memory_types();
    std::stable_partition(types.begin(), types.end(), [](const std::string& t) { return t == "gru"; });  // GRU first
    for (const auto& type : types) {
      if (paper) {
        const std::string config =
            type == "gru" ? "configs/popgym/repeat_first.yaml" : "configs/" + type + "_popgym.yaml";
        if (!fs::exists(source_dir() / config)) {
          fmt::print("({}: no paper config {}; left out)\n", type, config);
          continue;
        }
        cases.push_back({.name = "paper config, " + type,
                         .config = config,
                         .iterations = 2,
                         .torch_threads = 0,
                         .memory_type = type,
                         .last_iteration_rate = true});
      } else {  // STM runs ~100x slower than the GRU here: one iteration is enough to time
        cases.push_back(
            {"learning-test config, " + type, "configs/gru_repeat_first.yaml", type == "stm" ? 1 : 3, 1, type});
      }
    }
  }
  const auto only_case = parsed.get("case");  // a --concurrent child: one case
  if (only_case && concurrent)
    throw UsageError("--case runs one case in this process; it does not go with --concurrent");
  if (only_case) {
    const auto i = parse_integer(*only_case);
    if (!i || *i < 0 || *i >= static_cast<int64_t>(cases.size()))
      throw UsageError(fmt::format("--case {}: not a case index (0 to {})", *only_case, cases.size() - 1));
    cases = {cases[static_cast<size_t>(*i)]};
  }
  nlohmann::json results = nlohmann::json::array();
  const fs::path scratch = fs::temp_directory_path() / fmt::format("rlm-bench-{}", ::getpid());
  const std::string default_gemm = nn::onednn_linear_enabled() ? "onednn" : "mkl";
  fmt::print("PPO + {} on RepeatFirstEasy, end to end, device {}\n", backends ? "each memory backend" : "GRU", device);
  const nlohmann::json machine = {{"cpu", cpu_model_name()},
                                  {"cpu_isa", cpu_isa_name(usable_cpu_isa())},
                                  {"bf16_products", nn::cpu_has_native_bf16()},
                                  {"default_cpu_gemm", default_gemm}};
  fmt::print("CPU: {} ({} kernels{}), float32 GEMMs by default: {}\n", cpu_model_name(), cpu_isa_name(usable_cpu_isa()),
             nn::cpu_has_native_bf16() ? ", bf16 products" : "", default_gemm == "mkl" ? "MKL" : "oneDNN");
  fmt::print("{:<46} {:>10} {:>10} {:>10} {:>10} {:>12}{}\n", "case", "env steps", "seconds", "rollout %", "update %",
             "env steps/s", backends ? "  vs GRU" : "");
  double gru_sps = 0;
  for (size_t case_index = 0; case_index < cases.size(); ++case_index) {
    const Case& c = cases[case_index];
    std::vector<std::string> overrides = {"logging.tensorboard=false", "logging.console=false",
                                          "experiment.device=" + device, "experiment.cpu_matmul=" + c.cpu_matmul};
    if (c.torch_threads > 0) overrides.push_back("experiment.torch_threads=" + std::to_string(c.torch_threads));
    if (!c.memory_type.empty()) overrides.push_back("model.memory.type=" + c.memory_type);
    if (!c.cuda_graphs) overrides.push_back("experiment.cuda_graphs=false");
    Config config = load_config(source_dir() / c.config, overrides);  // the configs ship with the sources
    // Stop after c.iterations iterations: every iteration collects at least num_envs * steps_per_env steps.
    config.algo.total_steps = static_cast<int64_t>(config.env.num_envs) * config.algo.ppo.steps_per_env * c.iterations;
    config.checkpoint.every = 1 << 30;
    const fs::path run_dir = scratch / (fs::path(c.config).stem().string() + c.memory_type);
    fs::create_directories(run_dir);
    const auto trainer = agents::make_trainer(config, run_dir);
    const std::string gemm = c.cpu_gemm.empty() ? default_gemm : c.cpu_gemm;
    nn::set_onednn_linear(gemm == "onednn");
    const auto start = std::chrono::steady_clock::now();
    const auto summary = trainer->train();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    nn::set_onednn_linear(default_gemm == "onednn");
    const double sps = c.last_iteration_rate ? last_iteration_rate(run_dir) : summary.env_steps / seconds;
    const double rollout_share = 100.0 * summary.rollout_seconds / seconds;
    const double update_share = 100.0 * summary.update_seconds / seconds;
    if (c.memory_type == "gru") gru_sps = sps;
    const double vs_gru = gru_sps > 0 ? sps / gru_sps : 0;
    fmt::print("{:<46} {:>10} {:>10.2f} {:>10.1f} {:>10.1f} {:>12.0f}{}\n", c.name, summary.env_steps, seconds,
               rollout_share, update_share, sps, backends ? fmt::format("  {:>6.3f}x", vs_gru) : "");
    std::fflush(stdout);      // each figure as it comes, also when stdout is a file
    nlohmann::json together;  // N runs of this case at once, as child processes
    if (concurrent) {
      std::vector<int> pids;
      for (int k = 0; k < *concurrent; ++k) {
        auto argv = child_arguments(args);
        const fs::path json = scratch / fmt::format("case{}_run{}.json", case_index, k);
        argv.insert(argv.end(), {"--case", std::to_string(case_index), "--json", json.string()});
        // Told that N processes share the CPUs, so that a config with torch_threads 0 takes its share.
        pids.push_back(start_process(argv, {.discard_stdout = true, .discard_stderr = false},
                                     {fmt::format("{}={}", kCpuShareVariable, *concurrent)}));
      }
      double sum = 0;
      std::vector<double> each;
      for (size_t k = 0; k < pids.size(); ++k) {
        const int status = wait_process(pids[k]);
        if (status != 0)
          throw UsageError(fmt::format("--concurrent: run {} of case '{}' exited {}", k, c.name, status));
        std::ifstream file(scratch / fmt::format("case{}_run{}.json", case_index, k));
        const auto r = nlohmann::json::parse(file);
        each.push_back(r.at("results").at(0).at("env_steps_per_second").get<double>());
        sum += each.back();
      }
      fmt::print("{:<46} {:>10} {:>10} {:>10} {:>10} {:>12.0f}  {:.2f}x one run\n",
                 fmt::format("  {} at once, together", *concurrent), "", "", "", "", sum, sum / sps);
      std::fflush(stdout);
      together = {
          {"runs", *concurrent}, {"env_steps_per_second", sum}, {"each", each}, {"relative_to_one_run", sum / sps}};
    }
    results.push_back({{"case", c.name},
                       {"concurrent", together},
                       {"config", c.config},
                       {"device", device},
                       {"env_steps", summary.env_steps},
                       {"iterations", summary.iterations},
                       {"seconds", seconds},
                       {"env_steps_per_second", sps},
                       {"rollout_seconds", summary.rollout_seconds},
                       {"update_seconds", summary.update_seconds},
                       {"torch_threads", c.torch_threads},
                       {"cpu_matmul", c.cpu_matmul},
                       {"cpu_gemm", cpu ? nlohmann::json(gemm) : nlohmann::json()},
                       {"memory_type", c.memory_type.empty() ? config.model.memory.type : c.memory_type},
                       {"relative_to_gru", backends ? nlohmann::json(vs_gru) : nlohmann::json()}});
  }
  // The figures first, the scratch runs after: the results must not depend on the clean-up (on the lent GPU image
  // remove_all once bound to libtorch's broken copy and crashed; see CMakeLists.txt on the libstdc++ link order).
  if (auto json = parsed.get("json"))
    write_file_atomic(*json, nlohmann::json{{"machine", machine}, {"results", results}}.dump(2) + "\n");
  std::fflush(stdout);
  fs::remove_all(scratch);
  return 0;
}

}  // namespace rlm::app
