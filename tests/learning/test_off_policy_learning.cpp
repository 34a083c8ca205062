// Learning tests of the recurrent off-policy trainers, on CPU within a fixed step budget:
// - SAC-D + GRU must learn POPGym RepeatFirstEasy to a deterministic evaluation return >= 0.9 (best 1.0, random
//   -0.5, a memoryless policy at best about -0.25; the reward is not an input, so only memory solves it);
// - SAC + GRU must swing up and hold POPGym PositionOnlyPendulumEasy (angle only, no velocity) to an evaluation
//   return no random policy reaches;
// - SAC-D + GRU must solve Memory-RL's passive T-maze of length 10 (success rate >= 0.9, memoryless 0.5);
// - SAC + GRU must succeed on Point Robot's training tasks clearly more often than random actions do, both measured
//   here on the same episodes.

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agents/experiment_config.hpp"
#include "agents/off_policy.hpp"
#include "learning/learning_util.hpp"

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

Evaluation train_and_evaluate(const std::string& config_file, const std::string& name) {
  const auto config = rlm::learning_test::load_test_config(config_file);
  const auto run_dir = rlm::learning_test::fresh_run_dir(name);
  rlm::agents::OffPolicyTrainer trainer(config, run_dir);
  const auto summary = trainer.train();
  CHECK(summary.env_steps >= config.algo.total_steps);
  const Evaluation evaluation{last_logged(run_dir, "eval/episode_return_mean"),
                              last_logged(run_dir, "eval/success_rate")};
  fs::remove_all(run_dir);
  return evaluation;
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
  const auto config = rlm::learning_test::load_test_config("configs/offpolicy/sac_gru_point_robot.yaml");
  REQUIRE(config.env.options.task_split == "train");
  const auto c = rlm::learning_test::train_then_compare_with_random(config, "point-robot", 400);
  INFO("success rates: random " << c.random.success_rate() << ", trained (sampled) " << c.sampled.success_rate()
                                << ", trained (greedy) " << c.greedy.success_rate());
  CHECK(c.random.success_rate() < 0.3);
  CHECK(c.sampled.success_rate() >= c.random.success_rate() + 0.15);
  CHECK(c.greedy.success_rate() >= c.random.success_rate() + 0.15);
}
