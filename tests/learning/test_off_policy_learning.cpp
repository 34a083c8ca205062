// Learning tests of the recurrent off-policy trainers, on CPU within a fixed step budget:
// - SAC-D + GRU must learn POPGym RepeatFirstEasy to a deterministic evaluation return >= 0.9 (best 1.0, random
//   -0.5, a memoryless policy at best about -0.25; the reward is not an input, so only memory solves it);
// - SAC + GRU must swing up and hold POPGym PositionOnlyPendulumEasy (angle only, no velocity) to an evaluation
//   return no random policy reaches;
// - SAC-D + GRU must solve Memory-RL's passive T-maze of length 10 (success rate >= 0.9, memoryless 0.5);
// - SAC + GRU must succeed on Point Robot's training tasks clearly more often than random actions do, both measured
//   here on the same episodes.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agents/acting.hpp"
#include "agents/experiment_config.hpp"
#include "agents/off_policy.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"

namespace fs = std::filesystem;

namespace {

/// The last value of a metric the run logged (-1e9 when it never logged one).
double last_logged(const fs::path& run_dir, const std::string& metric) {
  double last = -1e9;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line);
    const auto it = row.find(metric);
    if (it != row.end() && it->is_number()) last = it->get<double>();
  }
  return last;
}

/// The last deterministic evaluation's mean return and success rate.
struct Evaluation {
  double return_mean, success_rate;
};

rlm::Config test_config(const std::string& config_file) {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  const fs::path repo = root ? root : ".";
  return rlm::load_config(repo / config_file,
                          {"experiment.device=cpu", "logging.console=false", "logging.tensorboard=false"});
}

Evaluation train_and_evaluate(const std::string& config_file, const std::string& name) {
  const auto config = test_config(config_file);
  const auto run_dir = fs::temp_directory_path() / ("rlm-learning-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(run_dir);
  fs::create_directories(run_dir);
  rlm::agents::OffPolicyTrainer trainer(config, run_dir);
  const auto summary = trainer.train();
  CHECK(summary.env_steps >= config.algo.total_steps);
  const Evaluation evaluation{last_logged(run_dir, "eval/episode_return_mean"),
                              last_logged(run_dir, "eval/success_rate")};
  fs::remove_all(run_dir);
  return evaluation;
}

/// The success rate of `policy` over `episodes` episodes of the config's env and tasks, on fixed episode seeds.
double success_rate(const rlm::Config& config, rlm::agents::ActingPolicy& policy, int64_t episodes,
                    bool deterministic) {
  rlm::envs::VecEnv envs(config.env.id, config.env.num_envs, 1, /*seed=*/20261124,
                         rlm::envs::wrapper_options(config.env), config.env.options);
  const auto spec = rlm::agents::ActionSpec::from_space(envs.action_space(), config.env.id);
  const torch::Generator generator = at::detail::createCPUGenerator(7);
  rlm::agents::EpisodeTally tally;
  rlm::agents::run_episodes(envs, policy, spec, rlm::agents::episode_quota(episodes, envs.num_envs()), deterministic,
                            generator, false, [&](rlm::agents::EpisodeRecord&& r) { tally.add(r); });
  return tally.success_rate();
}

}  // namespace

TEST_CASE("sacd + gru learns RepeatFirstEasy", "[learning]") {
  const double eval_return = train_and_evaluate("configs/offpolicy/sacd_gru_repeat_first.yaml", "sacd").return_mean;
  INFO("last evaluation return " << eval_return);
  CHECK(eval_return >= 0.9);
}

TEST_CASE("sac + gru learns PositionOnlyPendulumEasy", "[learning]") {
  // Random actions score about 0.1-0.5 per episode (the return is scaled into [-1, 1]); holding the pendulum up
  // from angle observations alone needs the velocity the memory infers.
  const double eval_return = train_and_evaluate("configs/offpolicy/sac_gru_pendulum.yaml", "sac").return_mean;
  INFO("last evaluation return " << eval_return);
  CHECK(eval_return >= 0.7);
}

TEST_CASE("sacd + gru solves the passive T-maze of length 10 by success rate", "[learning]") {
  // Without memory the final turn is a coin flip (success 0.5); the goal is shown only in the first obs.
  const auto evaluation = train_and_evaluate("configs/offpolicy/sacd_gru_tmaze_passive.yaml", "tmaze");
  INFO("last evaluation: return " << evaluation.return_mean << ", success rate " << evaluation.success_rate);
  CHECK(evaluation.success_rate >= 0.9);
  CHECK(evaluation.return_mean >= 0.85);
}

TEST_CASE("sac + gru succeeds on point robot's training tasks more often than random actions", "[learning]") {
  // Random actions succeed in about 0.2 of the episodes; the policy must find the goal on the half-circle from its
  // sparse reward. 400 episodes give a standard error of about 0.025 on each rate.
  const auto config = test_config("configs/offpolicy/sac_gru_point_robot.yaml");
  REQUIRE(config.env.options.task_split == "train");
  const auto run_dir = fs::temp_directory_path() / ("rlm-learning-point-robot-" + std::to_string(::getpid()));
  fs::remove_all(run_dir);
  fs::create_directories(run_dir);
  rlm::agents::OffPolicyTrainer trainer(config, run_dir);
  trainer.train();
  fs::remove_all(run_dir);
  rlm::agents::UniformRandomPolicy random(trainer.action_spec());
  rlm::agents::OffPolicyActingPolicy trained(trainer.agent(), config, torch::kCPU);
  const double random_rate = success_rate(config, random, 400, false);
  const double sampled_rate = success_rate(config, trained, 400, false);
  const double greedy_rate = success_rate(config, trained, 400, true);
  INFO("success rates: random " << random_rate << ", trained (sampled) " << sampled_rate << ", trained (greedy) "
                                << greedy_rate);
  CHECK(random_rate < 0.3);
  CHECK(sampled_rate >= random_rate + 0.15);
  CHECK(greedy_rate >= random_rate + 0.15);
}
