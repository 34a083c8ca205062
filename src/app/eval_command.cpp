// `rlm eval --run RUN_DIR [--episodes N] [--deterministic] [--checkpoint FILE]`: runs the saved policy for N whole
// episodes and prints mean ± std of the episode return; writes RUN_DIR/eval.json atomically.
// Every env runs a fixed share of the episodes, so short episodes are not over-represented.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>

#include "agents/action_distribution.hpp"
#include "agents/actor_critic.hpp"
#include "agents/checkpoint.hpp"
#include "agents/ppo.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/config.hpp"
#include "core/error.hpp"
#include "core/seed.hpp"
#include "envs/vec_env.hpp"

namespace rlm::app {
namespace fs = std::filesystem;

int eval_command(const Args& args) {
  const auto parsed = parse_args(args, {"run", "episodes", "checkpoint"}, {"deterministic"}, false);
  if (!parsed.has("run")) throw UsageError("eval needs --run RUN_DIR");
  const fs::path run_dir = *parsed.get("run");
  if (!fs::is_directory(run_dir)) throw UsageError(fmt::format("run folder '{}' not found", run_dir.string()));
  const fs::path config_file = run_dir / "config.yaml";
  ConfigOrigins origins;
  const Config config = load_config(config_file, {}, &origins);
  int64_t episodes = config.eval.episodes;
  if (auto e = parsed.get("episodes")) {
    const auto n = parse_integer(*e);
    if (!n || *n < 1 || *n > 100'000'000)
      throw UsageError(fmt::format("--episodes must be an integer from 1 to 100,000,000, got '{}'", *e));
    episodes = *n;
  }
  const bool deterministic = config.eval.deterministic || parsed.has("deterministic");
  if (!parsed.has("checkpoint") && !agents::latest_checkpoint(run_dir))
    throw CheckpointError(fmt::format("run '{}' has no checkpoint to evaluate", run_dir.string()));

  agents::set_torch_threads(config.experiment.torch_threads);
  const torch::Device device = with_config_locations(origins, config_file.string(),
                                                     [&] { return agents::resolve_device(config.experiment.device); });
  const auto seed = derive_seed(static_cast<uint64_t>(config.experiment.seed), {kEvalStream});
  const int num_envs = static_cast<int>(std::min<int64_t>(episodes, config.env.num_envs));
  envs::VecEnv vec(config.env.id, num_envs, config.env.num_threads, seed, envs::wrapper_options(config.env));
  const auto spec = agents::ActionSpec::from_space(vec.action_space(), config.env.id);
  agents::ActorCritic model(vec.obs_size(), spec.num_logits(), config.model);
  // --checkpoint FILE evaluates that file or fails (exit 3); by default the newest valid one, as --resume takes it.
  fs::path checkpoint;
  if (auto c = parsed.get("checkpoint")) {
    checkpoint = *c;
    agents::load_checkpoint(checkpoint, *model, nullptr);
  } else {
    checkpoint = agents::load_newest_valid_checkpoint(run_dir, *model, nullptr,
                                                      [](const fs::path& path, const std::string& reason) {
                                                        fmt::print("[eval] skipped checkpoint {}: {}\n",
                                                                   path.filename().string(), reason);
                                                      })
                     .path;
  }
  model->to(device);
  model->eval();
  torch::NoGradGuard no_grad;
  torch::Generator generator = at::detail::createCPUGenerator(seed);

  // Env i runs quota[i] episodes; after that its steps are ignored.
  std::vector<int64_t> quota(num_envs, episodes / num_envs);
  for (int64_t i = 0; i < episodes % num_envs; ++i) ++quota[i];
  std::vector<double> running(num_envs, 0.0), returns;
  std::vector<float> actions(num_envs * spec.action_size());
  vec.reset();
  auto state = model->initial_state(num_envs, device);
  auto starts = torch::ones({1, num_envs}, torch::kBool);
  while (static_cast<int64_t>(returns.size()) < episodes) {
    auto obs = torch::from_blob(const_cast<float*>(vec.obs().data()), {1, num_envs, vec.obs_size()}).to(device);
    auto out = model->forward(obs, state, starts.to(device));
    agents::ActionDistribution dist(spec, out.logits[0].to(torch::kCPU));
    spec.to_env_actions(deterministic ? dist.mode() : dist.sample(generator), actions);
    vec.step(actions);
    auto* start_flags = starts.data_ptr<bool>();
    for (int i = 0; i < num_envs; ++i) {
      const bool done = vec.terminated()[i] || vec.truncated()[i];
      start_flags[i] = done;
      if (quota[i] == 0) continue;
      running[i] += vec.rewards()[i];
      if (done) {
        returns.push_back(running[i]);
        running[i] = 0.0;
        --quota[i];
      }
    }
    state = out.state;
  }

  const double mean = std::accumulate(returns.begin(), returns.end(), 0.0) / returns.size();
  double var = 0.0;
  for (double r : returns) var += (r - mean) * (r - mean);
  const double std = std::sqrt(var / returns.size());
  fmt::print("[eval] {} on {}: mean episode return {:.4f} ± {:.4f} over {} episodes ({})\n", run_dir.string(),
             config.env.id, mean, std, returns.size(), deterministic ? "greedy" : "sampled actions");
  nlohmann::json out = {{"env_id", config.env.id},
                        {"checkpoint", checkpoint.string()},
                        {"episodes", returns.size()},
                        {"deterministic", deterministic},
                        {"mean_return", mean},
                        {"std_return", std},
                        {"min_return", *std::min_element(returns.begin(), returns.end())},
                        {"max_return", *std::max_element(returns.begin(), returns.end())},
                        {"returns", returns}};
  write_file_atomic(run_dir / "eval.json", out.dump(2) + "\n");
  return 0;
}

}  // namespace rlm::app
