// Learning tests of the recurrent off-policy trainers, on CPU within a fixed step budget:
// - SAC-D + GRU must learn POPGym RepeatFirstEasy to a deterministic evaluation return >= 0.9 (best 1.0, random
//   -0.5, a memoryless policy at best about -0.25; the reward is not an input, so only memory solves it);
// - SAC + GRU must swing up and hold POPGym PositionOnlyPendulumEasy (angle only, no velocity) to an evaluation
//   return no random policy reaches.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agents/experiment_config.hpp"
#include "agents/off_policy.hpp"

namespace fs = std::filesystem;

namespace {

/// The last deterministic evaluation's mean return the run logged.
double last_eval_return(const fs::path& run_dir) {
  double last = -1e9;
  std::ifstream in(run_dir / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto row = nlohmann::json::parse(line);
    const auto it = row.find("eval/episode_return_mean");
    if (it != row.end() && it->is_number()) last = it->get<double>();
  }
  return last;
}

double train_and_evaluate(const std::string& config_file, const std::string& name) {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  const fs::path repo = root ? root : ".";
  const auto config = rlm::load_config(repo / config_file,
                                       {"experiment.device=cpu", "logging.console=false", "logging.tensorboard=false"});
  const auto run_dir = fs::temp_directory_path() / ("rlm-learning-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(run_dir);
  fs::create_directories(run_dir);
  rlm::agents::OffPolicyTrainer trainer(config, run_dir);
  const auto summary = trainer.train();
  CHECK(summary.env_steps >= config.algo.total_steps);
  const double eval_return = last_eval_return(run_dir);
  fs::remove_all(run_dir);
  return eval_return;
}

}  // namespace

TEST_CASE("sacd + gru learns RepeatFirstEasy", "[learning]") {
  const double eval_return = train_and_evaluate("configs/offpolicy/sacd_gru_repeat_first.yaml", "sacd");
  INFO("last evaluation return " << eval_return);
  CHECK(eval_return >= 0.9);
}

TEST_CASE("sac + gru learns PositionOnlyPendulumEasy", "[learning]") {
  // Random actions score about 0.1-0.5 per episode (the return is scaled into [-1, 1]); holding the pendulum up
  // from angle observations alone needs the velocity the memory infers.
  const double eval_return = train_and_evaluate("configs/offpolicy/sac_gru_pendulum.yaml", "sac");
  INFO("last evaluation return " << eval_return);
  CHECK(eval_return >= 0.7);
}
