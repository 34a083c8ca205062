// rlm_env_bench: env steps per second for every registered id, through VecEnv, so regressions in the env layer
// (allocation per step, slow wrappers, pool overhead) show up as numbers.
// Usage: rlm_env_bench [--seconds S] [--json F] [--filter SUBSTRING] [--scaling THREADS]
// --scaling N: 1 vs N threads on the heavier envs (or the --filter ids), beside N independent single-thread VecEnvs
// (the same work with no pool) and the machine's own ceiling.
#include <fmt/format.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "envs/registry.hpp"
#include "envs/rng.hpp"
#include "envs/vec_env.hpp"

namespace {

using rlm::envs::Space;

/// A random valid raw action for `space` (Discrete/MultiDiscrete uniform, Box uniform within finite bounds).
void sample_action(const Space& space, rlm::envs::Rng& rng, float*& out) {
  switch (space.kind) {
    case Space::Kind::Discrete:
    case Space::Kind::MultiDiscrete:
      for (int64_t n : space.nvec) *out++ = static_cast<float>(rng.uniform_int(static_cast<uint64_t>(n)));
      break;
    case Space::Kind::Box:
      for (size_t i = 0; i < space.low.size(); ++i)
        *out++ = static_cast<float>(rng.uniform(std::max(space.low[i], -1.0f), std::min(space.high[i], 1.0f)));
      break;
    case Space::Kind::Tuple:
      for (const Space& p : space.parts) sample_action(p, rng, out);
      break;
  }
}

/// A VecEnv with pre-drawn actions, cycled, so that the timing measures the envs and not the action sampler.
class TimedVecEnv {
 public:
  TimedVecEnv(const std::string& id, int num_envs, int num_threads, uint64_t seed,
              const rlm::envs::WrapperOptions& options)
      : vec_(id, num_envs, num_threads, seed, options), batch_(static_cast<size_t>(num_envs * vec_.action_size())) {
    actions_.resize(kBatches * batch_);
    rlm::envs::Rng rng(seed + 7);
    for (float* out = actions_.data(); out != actions_.data() + actions_.size();)
      sample_action(vec_.action_space(), rng, out);
    vec_.reset();
  }

  /// Env steps per second (num_envs * vector steps / wall time) over about `seconds`.
  double run(double seconds) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    int64_t steps = 0;
    double elapsed = 0;
    while (elapsed < seconds) {
      for (int b = 0; b < kBatches; ++b) vec_.step(std::span<const float>(actions_).subspan(b * batch_, batch_));
      steps += static_cast<int64_t>(kBatches) * vec_.num_envs();
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    }
    return static_cast<double>(steps) / elapsed;
  }

 private:
  static constexpr int kBatches = 256;
  rlm::envs::VecEnv vec_;
  size_t batch_;
  std::vector<float> actions_;
};

double measure(const std::string& id, int num_envs, int num_threads, const rlm::envs::WrapperOptions& options,
               double seconds) {
  return TimedVecEnv(id, num_envs, num_threads, /*seed=*/12345, options).run(seconds);
}

/// The same work with no pool at all: `threads` independent single-thread VecEnvs of num_envs / threads envs each,
/// each built by the thread that steps it, started together. Their summed steps/s is what a pool with free hand-overs
/// could reach on this machine for this env, so the pool's ratio against it is the pool's own efficiency.
double measure_independent(const std::string& id, int num_envs, int threads, const rlm::envs::WrapperOptions& options,
                           double seconds) {
  std::vector<double> rates(static_cast<size_t>(threads));
  std::barrier start(threads);
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        TimedVecEnv vec(id, num_envs / threads, 1, /*seed=*/12345 + static_cast<uint64_t>(t), options);
        start.arrive_and_wait();
        rates[static_cast<size_t>(t)] = vec.run(seconds);
      });
  }
  double total = 0;
  for (double r : rates) total += r;
  return total;
}

int write_json(const std::string& path, double seconds, const nlohmann::json& results) {
  if (path.empty()) return 0;
  std::ofstream out(path);
  out << nlohmann::json{{"unit", "env steps per second"}, {"seconds", seconds}, {"results", results}}.dump(2) << "\n";
  if (!out) {
    std::cerr << "rlm_env_bench: cannot write " << path << "\n";
    return 1;
  }
  return 0;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

/// The machine's own multi-thread ceiling: `threads` copies of a throughput-bound integer loop (independent chains
/// that fill one core's ALUs, touching no shared memory) against one copy. On a VM whose vCPUs share physical cores
/// with each other or with other tenants this is well below `threads`, and no thread pool can beat it.
double compute_ratio(int threads) {
  const auto work = [] {
    uint64_t y[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < 20'000'000; ++i)
      for (uint64_t& v : y) v = v * 6364136223846793005ULL + 1442695040888963407ULL;
    volatile uint64_t sink = y[0] ^ y[7];
    (void)sink;
  };
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  work();
  const double one = std::chrono::duration<double>(Clock::now() - start).count();
  start = Clock::now();
  {
    std::vector<std::jthread> pool;
    pool.reserve(static_cast<size_t>(threads));
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  const double many = std::chrono::duration<double>(Clock::now() - start).count();
  return threads * one / many;
}

/// Thread scaling of the heavier envs, measured so that a noisy machine cannot fake it: 1-thread and N-thread runs
/// alternate `reps` times (so a slow spell of the host hits both), each ratio is a median, and the no-pool ratio
/// (measure_independent) and the machine's own ceiling (compute_ratio) are measured the same way in the same run.
/// Efficiency is the pool's ratio over the no-pool ratio: what the pool loses to its hand-overs on this machine.
int run_scaling(int threads, int num_envs, int reps, double seconds, const std::string& filter,
                const rlm::envs::WrapperOptions& paper, nlohmann::json& results) {
  fmt::print("thread scaling: {} envs, paper wrappers, 1 vs {} threads, median of {} alternating runs of {:.2f} s\n",
             num_envs, threads, reps, seconds);
  fmt::print("{:<38} {:>11} {:>11} {:>9} {:>12} {:>14} {:>11}\n", "id", "1 thread", fmt::format("{} threads", threads),
             "ratio", "no-pool", "machine ratio", "efficiency");
  const std::vector<std::string> heavy = {"MineSweeper", "Battleship", "Labyrinth", "CartPole", "Pendulum"};
  std::vector<double> all_ratios, all_no_pool, all_efficiency;
  for (const std::string& id : rlm::envs::registered_env_ids()) {
    if (id.find(filter) == std::string::npos) continue;
    if (filter.empty() &&
        std::none_of(heavy.begin(), heavy.end(), [&](const std::string& f) { return id.find(f) != std::string::npos; }))
      continue;
    std::vector<double> one, many, ratios, no_pool, machine;
    for (int r = 0; r < reps; ++r) {
      one.push_back(measure(id, num_envs, 1, paper, seconds));
      many.push_back(measure(id, num_envs, threads, paper, seconds));
      ratios.push_back(many.back() / one.back());
      no_pool.push_back(measure_independent(id, num_envs, threads, paper, seconds) / one.back());
      machine.push_back(compute_ratio(threads));
    }
    const double ratio = median(ratios), independent = median(no_pool), ceiling = median(machine);
    all_ratios.push_back(ratio);
    all_no_pool.push_back(independent);
    all_efficiency.push_back(ratio / independent);
    fmt::print("{:<38} {:>10.2f}M {:>10.2f}M {:>8.2f}x {:>11.2f}x {:>13.2f}x {:>10.0f}%\n", id, median(one) / 1e6,
               median(many) / 1e6, ratio, independent, ceiling, 100 * ratio / independent);
    std::fflush(stdout);
    results.push_back({{"id", id},
                       {"num_envs", num_envs},
                       {"threads", threads},
                       {"steps_per_s_1thread", median(one)},
                       {"steps_per_s_threads", median(many)},
                       {"ratio", ratio},
                       {"no_pool_ratio", independent},
                       {"machine_ratio", ceiling}});
  }
  if (!all_ratios.empty())
    fmt::print("median over ids: ratio {:.2f}x, no-pool ratio {:.2f}x, pool efficiency (ratio / no-pool) {:.0f}%\n",
               median(all_ratios), median(all_no_pool), 100 * median(all_efficiency));
  return 0;
}

/// The bench itself; main reports what it throws (an unknown id, a failing env, an unwritable --json file).
int run(int argc, char** argv) {
  double seconds = 0.5;
  std::string json_path;
  std::string filter;       // only ids containing this substring
  int scaling_threads = 0;  // > 0: the thread-scaling table instead of the throughput table
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (arg == "--filter" && i + 1 < argc) {
      filter = argv[++i];
    } else if (arg == "--scaling" && i + 1 < argc) {
      scaling_threads = std::atoi(argv[++i]);
    } else {
      std::cerr << "usage: rlm_env_bench [--seconds S] [--json FILE] [--filter SUBSTRING] [--scaling THREADS]\n";
      return 2;
    }
  }

  const rlm::envs::WrapperOptions raw{.previous_action = false, .antialias = false, .flatten = false};
  const rlm::envs::WrapperOptions paper{.previous_action = true, .antialias = true, .flatten = true};
  nlohmann::json results = nlohmann::json::array();
  if (scaling_threads > 0) {
    run_scaling(scaling_threads, /*num_envs=*/256, /*reps=*/5, std::min(seconds, 0.2), filter, paper, results);
    return write_json(json_path, seconds, results);
  }
  fmt::print("env steps/s through VecEnv ({:.2f} s per measurement)\n", seconds);
  fmt::print("{:<38} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8}\n", "id", "raw 16x1t", "paper 16x1t",
             "paper 64x1t", "paper 64x2t", "paper256x1t", "paper256x2t", "2t/1t");
  for (const std::string& id : rlm::envs::registered_env_ids()) {
    if (id.find(filter) == std::string::npos) continue;
    const double raw1 = measure(id, 16, 1, raw, seconds);
    const double paper1 = measure(id, 16, 1, paper, seconds);
    const double paper64_1 = measure(id, 64, 1, paper, seconds);
    const double paper64_2 = measure(id, 64, 2, paper, seconds);
    // Threads pay off once a batch step outweighs the hand-over between threads (about a microsecond).
    const double paper256_1 = measure(id, 256, 1, paper, seconds);
    const double paper256_2 = measure(id, 256, 2, paper, seconds);
    fmt::print("{:<38} {:>10.2f}M {:>10.2f}M {:>10.2f}M {:>10.2f}M {:>10.2f}M {:>10.2f}M {:>7.2f}x\n", id, raw1 / 1e6,
               paper1 / 1e6, paper64_1 / 1e6, paper64_2 / 1e6, paper256_1 / 1e6, paper256_2 / 1e6,
               paper256_2 / paper256_1);
    std::fflush(stdout);
    results.push_back({{"id", id},
                       {"raw_16envs_1thread", raw1},
                       {"paper_wrappers_16envs_1thread", paper1},
                       {"paper_wrappers_64envs_1thread", paper64_1},
                       {"paper_wrappers_64envs_2threads", paper64_2},
                       {"paper_wrappers_256envs_1thread", paper256_1},
                       {"paper_wrappers_256envs_2threads", paper256_2}});
  }
  return write_json(json_path, seconds, results);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "rlm_env_bench: " << e.what() << "\n";
    return 1;
  }
}
