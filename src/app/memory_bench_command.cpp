// `rlm bench-memory [--device D] [--sequences N] [--steps T] [--json FILE]`: the memory layer's speed, side by side in
// one run (docs/BENCHMARKS.md): linear_scan against the naive loop of torch ops (and, on a GPU, its achieved
// bandwidth against the device's measured copy bandwidth), then per backend at POPGym sizes the forward+backward time
// of one PPO minibatch (N sequences × T steps) and the single-step latency at batch 1 (acting), each with the torch
// operators it runs (nn/op_counter.hpp: about one kernel launch each on a GPU, where many small ones bound the time).
// `--profile K` adds, per backend, the K kernels (on the CPU: operators) where one forward+backward spends most time
// and how busy the device was over its wall time (nn/kernel_profile.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "agents/experiment_config.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "core/atomic_file.hpp"
#include "memory/registry.hpp"
#include "nn/kernel_profile.hpp"
#include "nn/op_counter.hpp"
#include "scan/linear_scan.hpp"

namespace rlm::app {
namespace {

using Clock = std::chrono::steady_clock;

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

/// Median wall time of `fn` in seconds over `reps` runs after one warm-up run.
double median_seconds(const torch::Device& device, int reps, const std::function<void()>& fn) {
  fn();
  synchronize(device);
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    fn();
    synchronize(device);
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct BackendCase {
  std::string name;
  int64_t input_size;  // the preprocessor width in the backend's POPGym config
  MemoryConfig config;
};

// POPGym sizes, as in configs/<backend>_popgym.yaml and configs/popgym/*.yaml.
std::vector<BackendCase> popgym_backends() {
  std::vector<BackendCase> cases;
  MemoryConfig gru;
  gru.type = "gru";
  gru.hidden_size = 256;
  cases.push_back({"gru (hidden 256)", 128, gru});
  MemoryConfig ffm;
  ffm.type = "ffm";
  ffm.hidden_size = 256;
  cases.push_back({"ffm (m 32, c 4, out 256)", 128, ffm});
  MemoryConfig shm;
  shm.type = "shm";
  shm.hidden_size = 128;
  shm.shm.state_clamp = 0;
  cases.push_back({"shm (H 128, out 1024)", 64, shm});
  MemoryConfig kf;
  kf.type = "kf";
  kf.hidden_size = 128;
  cases.push_back({"kf (E 128, N 128)", 128, kf});
  MemoryConfig spiking;
  spiking.type = "spiking";
  spiking.hidden_size = 1024;
  cases.push_back({"spiking (N_h 1024)", 64, spiking});
  MemoryConfig stm;
  stm.type = "stm";
  stm.hidden_size = 256;
  cases.push_back({"stm (d 96, 8 slots)", 256, stm});
  return cases;
}

/// Prints the profile's top `rows` and returns them as JSON.
nlohmann::json report_profile(const nn::KernelProfile& profile, const torch::Device& device, size_t rows) {
  const bool gpu = device.is_cuda();
  fmt::print("  profile of one fwd+bwd: wall {:.2f} ms, device busy {:.2f} ms ({:.0f}%), {} {}\n",
             profile.wall_us / 1e3, profile.busy_us / 1e3, 100 * profile.busy_us / profile.wall_us, profile.calls(),
             gpu ? "kernels, copies and fills" : "operator calls");
  fmt::print("    {:<72} {:>8} {:>10} {:>7}\n", gpu ? "kernel" : "operator (self time)", "calls", "total ms", "busy");
  nlohmann::json top = nlohmann::json::array();
  for (size_t i = 0; i < std::min(rows, profile.rows.size()); ++i) {
    const auto& row = profile.rows[i];
    fmt::print("    {:<72} {:>8} {:>10.3f} {:>6.1f}%\n", nn::short_kernel_name(row.name, 72), row.calls,
               row.total_us / 1e3, 100 * row.total_us / profile.busy_us);
    top.push_back({{"name", row.name}, {"calls", row.calls}, {"total_us", row.total_us}});
  }
  return {{"wall_us", profile.wall_us}, {"busy_us", profile.busy_us}, {"calls", profile.calls()}, {"top", top}};
}

}  // namespace

int memory_bench_command(const Args& args) {
  const auto parsed = parse_args(args, {"json", "device", "sequences", "steps", "only", "profile"}, {}, false);
  const torch::Device device(parsed.get("device").value_or("cpu"));
  const int64_t sequences = std::stoll(parsed.get("sequences").value_or("64"));
  const int64_t steps = std::stoll(parsed.get("steps").value_or("1024"));
  const std::string only = parsed.get("only").value_or("");
  const int64_t profile_rows = std::stoll(parsed.get("profile").value_or("0"));
  torch::manual_seed(0);
  nlohmann::json results = {{"device", device.str()}, {"torch_threads", torch::get_num_threads()}};

  // ---- linear_scan ----
  {
    const int64_t batch = 64, channels = 1024;  // B·C = 64k
    const int64_t scan_steps = 1024;
    auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
    auto a = torch::rand({scan_steps, batch, channels}, opts) * 0.9;
    auto b = torch::randn({scan_steps, batch, channels}, opts);
    auto h0 = torch::zeros({batch, channels}, opts);
    torch::NoGradGuard no_grad;
    const double scan_s = median_seconds(device, 5, [&] { scan::linear_scan(a, b, h0); });
    const double loop_s = median_seconds(device, 1, [&] { scan::linear_scan_reference(a, b, h0); });
    const double bytes = 3.0 * static_cast<double>(a.numel()) * 4;  // read a, b; write h
    auto copy_dst = torch::empty_like(a);
    const double copy_s = median_seconds(device, 5, [&] { copy_dst.copy_(a); });
    const double copy_bw = 2.0 * static_cast<double>(a.numel()) * 4 / copy_s;
    fmt::print(
        "linear_scan float32 forward [T {}, B {}, C {}] on {}: {:.2f} ms, naive loop {:.2f} ms ({:.1f}x); "
        "{:.1f} GB/s against copy {:.1f} GB/s ({:.0f}%)\n",
        scan_steps, batch, channels, device.str(), scan_s * 1e3, loop_s * 1e3, loop_s / scan_s, bytes / scan_s / 1e9,
        copy_bw / 1e9, 100 * bytes / scan_s / copy_bw);
    results["linear_scan"] = {{"steps", scan_steps},           {"batch", batch},
                              {"channels", channels},          {"scan_ms", scan_s * 1e3},
                              {"loop_ms", loop_s * 1e3},       {"gb_per_s", bytes / scan_s / 1e9},
                              {"copy_gb_per_s", copy_bw / 1e9}};
  }

  // ---- backends ----
  fmt::print("{:<28} {:>12} {:>20} {:>22} {:>18} {:>14} {:>10}\n", "backend", "parameters",
             fmt::format("fwd+bwd {}x{} (s)", sequences, steps), "step latency B=1 (us)", "weights read (us)",
             "fwd+bwd ops", "step ops");
  nlohmann::json backends = nlohmann::json::array();
  for (const auto& c : popgym_backends()) {
    if (!only.empty() && c.config.type != only) continue;
    auto memory = memory::make_memory(c.config, c.input_size);
    memory->to(device);
    int64_t parameters = 0;
    for (const auto& p : memory->parameters()) parameters += p.numel();
    // Backends that keep their whole state per step for backward (STM: 82,944 floats per sequence and step) would
    // need more memory than the machine has at full size; say so instead of being killed.
    int64_t state_floats = 0;
    for (const auto& t : memory->initial_state(1, torch::kCPU).tensors) state_floats += t.numel();
    const double autograd_gb = c.config.type == "stm" ? 4.0 * state_floats * sequences * steps / 1e9 : 0.0;
    if (autograd_gb > 8.0) {
      fmt::print("{:<28} {:>12} {:>20} {:>22} {:>18} {:>14} {:>10}\n", c.name, parameters,
                 fmt::format("needs ~{:.0f} GB", autograd_gb), "-", "-", "-", "-");
      backends.push_back({{"backend", c.name},
                          {"type", c.config.type},
                          {"parameters", parameters},
                          {"skipped", fmt::format("autograd would keep ~{:.0f} GB of states", autograd_gb)}});
      continue;
    }
    auto x = torch::randn({steps, sequences, c.input_size}, torch::TensorOptions().device(device));
    auto starts = torch::zeros({steps, sequences}, torch::TensorOptions().dtype(torch::kBool).device(device));
    starts[0].fill_(true);
    memory->train();
    const auto train = [&] {
      memory->zero_grad();
      auto out = memory->forward(x, memory->initial_state(sequences, device), starts);
      out.y.sum().backward();
    };
    const double train_s = median_seconds(device, 2, train);
    int64_t train_ops = 0, step_ops = 0;
    {
      const nn::OpCounter ops;
      train();
      synchronize(device);
      train_ops = ops.count();
    }
    std::optional<nn::KernelProfile> profile;
    if (profile_rows > 0) {
      nn::KernelProfiler profiler(device);
      train();
      profile = profiler.stop();
    }
    memory->eval();
    torch::NoGradGuard no_grad;
    auto state = memory->initial_state(1, device);
    auto x1 = torch::randn({1, 1, c.input_size}, torch::TensorOptions().device(device));
    auto s1 = torch::zeros({1, 1}, torch::TensorOptions().dtype(torch::kBool).device(device));
    const double step_s = median_seconds(device, 200, [&] { state = memory->forward(x1, state, s1).state; });
    {
      const nn::OpCounter ops;
      state = memory->forward(x1, state, s1).state;
      step_ops = ops.count();
    }
    // A floor under any step that touches every weight once: reading all parameters (a sum per tensor), in the same
    // run. At batch 1 a layer with millions of weights is bound by this, not by its arithmetic.
    const double read_s = median_seconds(device, 200, [&] {
      for (const auto& p : memory->parameters()) p.sum();
    });
    fmt::print("{:<28} {:>12} {:>20.3f} {:>22.1f} {:>18.1f} {:>14} {:>10}\n", c.name, parameters, train_s, step_s * 1e6,
               read_s * 1e6, train_ops, step_ops);
    std::fflush(stdout);
    backends.push_back({{"backend", c.name},
                        {"type", c.config.type},
                        {"parameters", parameters},
                        {"sequences", sequences},
                        {"steps", steps},
                        {"forward_backward_s", train_s},
                        {"step_latency_us", step_s * 1e6},
                        {"weights_read_us", read_s * 1e6},
                        {"forward_backward_ops", train_ops},
                        {"step_ops", step_ops}});
    if (profile) backends.back()["profile"] = report_profile(*profile, device, static_cast<size_t>(profile_rows));
  }
  results["backends"] = backends;
  if (auto json = parsed.get("json")) write_file_atomic(*json, results.dump(2) + "\n");
  return 0;
}

}  // namespace rlm::app
