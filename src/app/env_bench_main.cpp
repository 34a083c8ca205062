// rlm_env_bench: env steps per second for every registered id, through VecEnv, so regressions in the env layer
// (allocation per step, slow wrappers, pool overhead) show up as numbers. Usage: rlm_env_bench [--seconds S] [--json F]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
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

/// Env steps per second (num_envs * vector steps / wall time) over about `seconds`.
double measure(const std::string& id, int num_envs, int num_threads, const rlm::envs::WrapperOptions& options,
               double seconds) {
  rlm::envs::VecEnv vec(id, num_envs, num_threads, /*seed=*/12345, options);
  // Pre-drawn actions, cycled, so that the timing measures the envs and not the action sampler.
  constexpr int kBatches = 256;
  std::vector<float> actions(static_cast<size_t>(kBatches * num_envs * vec.action_size()));
  rlm::envs::Rng rng(7);
  for (float* out = actions.data(); out != actions.data() + actions.size();)
    sample_action(vec.action_space(), rng, out);
  const auto batch = static_cast<size_t>(num_envs * vec.action_size());

  vec.reset();
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  int64_t steps = 0;
  double elapsed = 0;
  while (elapsed < seconds) {
    for (int b = 0; b < kBatches; ++b) vec.step(std::span<const float>(actions).subspan(b * batch, batch));
    steps += static_cast<int64_t>(kBatches) * num_envs;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  }
  return static_cast<double>(steps) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0.5;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::cerr << "usage: rlm_env_bench [--seconds S] [--json FILE]\n";
      return 2;
    }
  }

  const rlm::envs::WrapperOptions raw{.previous_action = false, .antialias = false, .flatten = false};
  const rlm::envs::WrapperOptions paper{.previous_action = true, .antialias = true, .flatten = true};
  nlohmann::json results = nlohmann::json::array();
  fmt::print("env steps/s through VecEnv ({:.2f} s per measurement)\n", seconds);
  fmt::print("{:<38} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11} {:>8}\n", "id", "raw 16x1t", "paper 16x1t",
             "paper 64x1t", "paper 64x2t", "paper256x1t", "paper256x2t", "2t/1t");
  try {
    for (const std::string& id : rlm::envs::registered_env_ids()) {
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
  } catch (const rlm::EnvError& e) {
    std::cerr << "rlm_env_bench: " << e.what() << "\n";
    return 1;
  }
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << nlohmann::json{{"unit", "env steps per second"}, {"seconds", seconds}, {"results", results}}.dump(2) << "\n";
    if (!out) {
      std::cerr << "rlm_env_bench: cannot write " << json_path << "\n";
      return 1;
    }
  }
  return 0;
}
