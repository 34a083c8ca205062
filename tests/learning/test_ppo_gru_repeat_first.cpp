// Learning test: PPO + GRU must learn POPGym RepeatFirstEasy (recall the first card's suit for 51 steps) to a mean
// episode return >= 0.9 (best 1.0, random -0.5, a memoryless policy at best about -0.25) within the fixed step
// budget of configs/gru_repeat_first.yaml, on CPU.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "agents/experiment_config.hpp"
#include "agents/ppo.hpp"

namespace fs = std::filesystem;

TEST_CASE("ppo + gru learns RepeatFirstEasy", "[learning]") {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  const fs::path repo = root ? root : ".";
  auto config = rlm::load_config(repo / "configs/gru_repeat_first.yaml",
                                 {"experiment.device=cpu", "logging.console=false", "logging.tensorboard=false"});
  const auto run_dir = fs::temp_directory_path() / ("rlm-learning-" + std::to_string(::getpid()));
  fs::remove_all(run_dir);
  fs::create_directories(run_dir);
  rlm::agents::PpoTrainer trainer(config, run_dir);
  const auto summary = trainer.train();
  INFO("env steps " << summary.env_steps << ", last mean return " << summary.last_return_mean);
  CHECK(summary.env_steps <= config.algo.total_steps + config.env.num_envs * 51);
  CHECK(summary.last_return_mean >= 0.9);
  fs::remove_all(run_dir);
}
