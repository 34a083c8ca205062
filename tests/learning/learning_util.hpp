// Shared by the learning tests: configs from the repo, scratch run folders, and a trained run's policy played against
// uniformly random actions on the same fixed-seed episodes, so "better than random" is measured, not assumed.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "agents/acting.hpp"
#include "agents/experiment_config.hpp"
#include "agents/trainer.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"

namespace rlm::learning_test {

/// A config file of the repo (RLM_SOURCE_DIR), on the CPU, without console output or TensorBoard files.
inline Config load_test_config(const std::string& config_file) {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  const std::filesystem::path repo = root ? root : ".";
  return load_config(repo / config_file,
                     {"experiment.device=cpu", "logging.console=false", "logging.tensorboard=false"});
}

/// An empty scratch run folder, unique to this process.
inline std::filesystem::path fresh_run_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("rlm-learning-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// What a trained run's policy and random actions score on the same episodes of the run's env and tasks.
struct Comparison {
  agents::EpisodeTally sampled, greedy, random;
};

/// Trains `config` to its step budget in a scratch folder, then plays `episodes` episodes with the newest checkpoint's
/// policy (sampled and greedy actions) and with uniformly random actions, every player on the same episode seeds.
inline Comparison train_then_compare_with_random(const Config& config, const std::string& name, int64_t episodes) {
  const auto run_dir = fresh_run_dir(name);
  agents::make_trainer(config, run_dir)->train();
  envs::VecEnv envs(config.env.id, config.env.num_envs, 1, /*seed=*/20261124, envs::wrapper_options(config.env),
                    config.env.options);
  const auto spec = agents::ActionSpec::from_space(envs.action_space(), config.env.id);
  auto trained = agents::load_policy(config, envs, run_dir, "", torch::kCPU, {});
  std::filesystem::remove_all(run_dir);
  agents::UniformRandomPolicy random(spec);
  const auto play = [&](agents::ActingPolicy& policy, bool deterministic) {
    const torch::Generator generator = at::detail::createCPUGenerator(7);
    envs.set_episode_counters(std::vector<uint64_t>(static_cast<size_t>(envs.num_envs()), 0));  // the same episodes
    agents::EpisodeTally tally;
    agents::run_episodes(envs, policy, spec, agents::episode_quota(episodes, envs.num_envs()), generator,
                         [&](agents::EpisodeRecord&& r) { tally.add(r); }, {.deterministic = deterministic});
    return tally;
  };
  Comparison c;
  c.sampled = play(*trained.policy, false);
  c.greedy = play(*trained.policy, true);
  c.random = play(random, false);
  return c;
}

}  // namespace rlm::learning_test
