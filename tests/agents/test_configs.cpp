// Every shipped config loads, and a trainer can be built from it (env id, spaces, sizes and max_seq_len all valid).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "agents/experiment_config.hpp"
#include "agents/ppo.hpp"
#include "agents/trainer.hpp"

namespace fs = std::filesystem;

TEST_CASE("every config under configs/ is valid", "[agents][configs]") {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  const fs::path configs = fs::path(root ? root : ".") / "configs";
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(configs)) {
    if (entry.path().extension() != ".yaml") continue;
    // A reproduction folder's sweep and paper table are not configs (tests/sweep checks them).
    if (entry.path().filename() == "sweep.yaml" || entry.path().filename() == "paper.yaml") continue;
    INFO(entry.path().string());
    const auto config = rlm::load_config(entry.path(), {"experiment.device=cpu"});
    const auto run_dir = fs::temp_directory_path() / "rlm-config-check-unused";
    CHECK_NOTHROW(rlm::agents::make_trainer(config, run_dir));
    CHECK_FALSE(fs::exists(run_dir));  // building a trainer writes nothing
    ++count;
  }
  // 22 under configs/ and configs/popgym, 14 under configs/offpolicy, 3 under configs/box2d, 51 under configs/repro:
  // raise it with every new file
  CHECK(count >= 90);
}

TEST_CASE("env.markovian and env.discrete_action reach the trainer's envs", "[agents][configs]") {
  auto config = rlm::parse_config("env:\n  id: popgym/BattleshipEasy\n  markovian: full\n  discrete_action: true\n",
                                  "inline.yaml", {"experiment.device=cpu"});
  const auto options = rlm::envs::wrapper_options(config.env);
  CHECK(options.markovian == "full");
  CHECK(options.discrete_action);
  rlm::envs::VecEnv vec(config.env.id, 2, 1, 0, options);
  CHECK(vec.action_space().to_string() == "Discrete(64)");
  CHECK_NOTHROW(rlm::agents::PpoTrainer(config, fs::temp_directory_path() / "rlm-config-check-unused"));
}
