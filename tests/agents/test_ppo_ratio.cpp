// The PPO ratio at an iteration's first minibatch, before any update, is exp(log π_train − log π_act): it compares
// the training forward (whole padded sequences, train mode, a fresh state at each episode start) with the acting one
// (one step at a time in eval mode, state carried across the rollout, the acting paths of the memories). For
// deterministic memories the two must agree to float precision; a mismatch in state handling, resets, padding or an
// acting path shows up here as a ratio far from 1. (With their default random draws in training, SHM's θ rows and the
// spiking thresholds, the deviation was 2e-3 to 6e-2 in this setting: the metric does see a difference.)
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "agents/experiment_config.hpp"
#include "agents/ppo.hpp"
#include "run_dir_util.hpp"

namespace fs = std::filesystem;

namespace {

rlm::Config small_config(const std::string& memory) {
  rlm::Config c;
  c.experiment.seed = 5;
  c.experiment.device = "cpu";
  c.experiment.torch_threads = 1;
  c.env.id = "popgym/RepeatPreviousEasy";
  c.env.num_envs = 4;
  c.env.num_threads = 1;
  c.model.ppo.feature_size = 16;
  c.model.ppo.preprocessor_size = 16;
  c.model.ppo.head_sizes = {16};
  c.model.memory.type = memory;
  c.model.memory.hidden_size = 16;
  c.model.memory.ffm.memory_size = 8;
  c.model.memory.kf.state_size = 8;
  c.model.memory.stm.item_size = 8;
  c.model.memory.stm.num_slots = 2;
  c.model.memory.stm.rel_size = 8;
  c.model.memory.shm.output_size = 16;
  c.model.memory.shm.calibration = "fixed_theta";
  c.model.memory.spiking.noise_low = c.model.memory.spiking.noise_high = 0.5;
  c.algo.total_steps = 2 * 4 * 64;  // two iterations: the second starts from updated weights
  c.algo.ppo.steps_per_env = 64;    // RepeatPreviousEasy episodes are 104 steps: one episode per env
  c.algo.ppo.minibatch_size = 208;
  c.algo.ppo.epochs = 2;
  c.algo.ppo.lr = 1e-3;
  c.logging.tensorboard = false;
  c.logging.console = false;
  return c;
}

}  // namespace

TEST_CASE("ppo: the first minibatch's ratio is 1 for deterministic memories", "[agents][ppo]") {
  // SHM with one learned θ row and the spiking cell with a constant threshold draw nothing random in training, so
  // they are deterministic too (and their acting paths are covered).
  for (const std::string memory : {"gru", "ffm", "kf", "stm", "shm", "spiking"}) {
    DYNAMIC_SECTION(memory) {
      const auto run_dir = rlm::test::fresh_dir("ratio-" + memory);
      rlm::agents::PpoTrainer trainer(small_config(memory), run_dir);
      REQUIRE(trainer.train().iterations == 2);
      std::ifstream in(run_dir / "metrics.jsonl");
      int rows = 0;
      for (std::string line; std::getline(in, line); ++rows) {
        const auto row = nlohmann::json::parse(line);
        INFO(memory << " iteration " << rows + 1);
        CHECK(row.at("losses/first_ratio_deviation").get<double>() < 1e-4);
        // Updates did move the policy: later minibatches see ratios away from 1.
        CHECK(row.at("losses/kl").get<double>() > 0.0);
      }
      CHECK(rows == 2);
      fs::remove_all(run_dir);
    }
  }
}
