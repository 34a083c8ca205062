// `rlm eval --run RUN_DIR [--episodes N] [--deterministic] [--checkpoint FILE] [env.options.KEY=VALUE ...]`: runs the
// saved policy for N whole episodes and prints mean ± std of the episode return (and the success rate for envs with
// a goal); writes RUN_DIR/eval.json atomically. env.options overrides evaluate on other tasks than the run trained on
// (Best-Arm's out-of-distribution σ, a longer T-maze); their results go to RUN_DIR/eval_<overrides>.json instead.
// Every env runs a fixed share of the episodes, so short episodes are not over-represented.
#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "agents/acting.hpp"
#include "agents/checkpoint.hpp"
#include "agents/experiment_config.hpp"
#include "agents/trainer.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "app/training.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/seed.hpp"
#include "envs/vec_env.hpp"

namespace rlm::app {
namespace fs = std::filesystem;
namespace {

/// eval.json, or eval_<key=value>_....json for an evaluation on other tasks (keys without "env.options."). A name
/// that would pass Linux's 255-byte limit keeps its first 180 characters and a hash of the whole (the file itself
/// lists the overrides).
std::string eval_file_name(const std::vector<std::string>& overrides) {
  std::string name = "eval";
  for (const std::string& override_text : overrides)
    name.append("_").append(override_text, std::string_view("env.options.").size());
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '=' && c != '.' && c != '-') c = '_';
  if (name.size() > 200) name = fmt::format("{}_{:016x}", name.substr(0, 180), std::hash<std::string>{}(name));
  return name + ".json";
}

}  // namespace

int eval_command(const Args& args) {
  const auto parsed = parse_args(args, {"run", "episodes", "checkpoint"}, {"deterministic"}, true);
  for (const std::string& override_text : parsed.overrides) {
    // The model must match the checkpoint: only the task may change.
    if (!override_text.starts_with("env.options."))
      throw UsageError(
          fmt::format("eval takes only env.options.* overrides (the model must match the checkpoint), "
                      "got '{}'",
                      override_text));
  }
  if (!parsed.has("run")) throw UsageError("eval needs --run RUN_DIR");
  const fs::path file = fs::path(*parsed.get("run")) / eval_file_name(parsed.overrides);
  const fs::path run_dir = *parsed.get("run");
  require_run_folder(run_dir, "--run");
  const fs::path config_file = run_dir / "config.yaml";
  ConfigOrigins origins;
  const Config config = load_config(config_file, parsed.overrides, &origins);
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
  const torch::Device device = with_config_locations(origins, config_file.string(), [&] {
    agents::set_cpu_matmul(config.experiment.cpu_matmul);
    return agents::resolve_device(config.experiment.device);
  });
  const auto seed = derive_seed(static_cast<uint64_t>(config.experiment.seed), {kEvalStream});
  const int num_envs = static_cast<int>(std::min<int64_t>(episodes, config.env.num_envs));
  envs::VecEnv vec(config.env.id, num_envs, config.env.num_threads, seed, envs::wrapper_options(config.env),
                   config.env.options);
  const auto spec = agents::ActionSpec::from_space(vec.action_space(), config.env.id);
  // --checkpoint FILE evaluates that file or fails (exit 3); by default the newest valid one, as --resume takes it.
  const fs::path requested = parsed.get("checkpoint").value_or("");
  auto loaded =
      agents::load_policy(config, vec, run_dir, requested, device, [](const fs::path& path, const std::string& reason) {
        fmt::print("[eval] skipped checkpoint {}: {}\n", path.filename().string(), reason);
      });
  const fs::path checkpoint = loaded.checkpoint;
  torch::Generator generator = at::detail::createCPUGenerator(seed);
  // Env i runs a fixed share of the episodes (agents::episode_quota), so short episodes are not over-represented.
  agents::EpisodeTally tally;
  agents::run_episodes(vec, *loaded.policy, spec, agents::episode_quota(episodes, num_envs), generator,
                       [&](agents::EpisodeRecord&& r) { tally.add(r); }, {.deterministic = deterministic});
  const std::vector<double>& returns = tally.returns;

  const double mean = tally.mean_return(), std = tally.std_return();
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
  if (vec.reports_success()) {
    const double rate = tally.success_rate();
    fmt::print("[eval] success rate {:.4f} ({} of {} episodes reached the goal)\n", rate, tally.successes,
               returns.size());
    out["success_rate"] = rate;
  }
  for (const std::string& override_text : parsed.overrides) {
    const size_t eq = override_text.find('=');  // present: parse_args accepts only key=value overrides
    out["env_options"][override_text.substr(0, eq)] = override_text.substr(eq + 1);
  }
  write_file_atomic(file, out.dump(2) + "\n");
  if (!parsed.overrides.empty()) fmt::print("[eval] wrote {}\n", file.string());
  return 0;
}

}  // namespace rlm::app
