// Bitwise resume: a run stopped after 2 iterations and resumed to 4 ends with exactly the parameters and metrics of
// an uninterrupted 4-iteration run (CPU, same seed and thread counts). Corrupt checkpoints give clear errors.
#include <torch/torch.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agents/checkpoint.hpp"
#include "agents/experiment_config.hpp"
#include "agents/ppo.hpp"
#include "core/error.hpp"
#include "run_dir_util.hpp"

namespace fs = std::filesystem;

namespace {

using rlm::test::fresh_dir;
using rlm::test::metrics_without_timing;

rlm::Config small_config(int64_t total_steps) {
  rlm::Config c;
  c.experiment.seed = 11;
  c.experiment.device = "cpu";
  c.experiment.torch_threads = 1;
  c.env.id = "popgym/RepeatFirstEasy";
  c.env.num_envs = 4;
  c.env.num_threads = 2;
  c.model.ppo.feature_size = 16;
  c.model.ppo.preprocessor_size = 16;
  c.model.ppo.head_sizes = {16};
  c.model.memory.hidden_size = 16;
  c.algo.total_steps = total_steps;
  c.algo.ppo.steps_per_env = 32;  // RepeatFirstEasy episodes are 51 steps: one episode per env and iteration
  c.algo.ppo.minibatch_size = 102;
  c.algo.ppo.epochs = 2;
  c.algo.ppo.lr = 1e-3;
  c.logging.tensorboard = false;
  c.logging.console = false;
  c.checkpoint.every = 2;
  return c;
}

}  // namespace

TEST_CASE("ppo: a resumed run is bitwise identical to an uninterrupted one", "[agents][resume]") {
  const auto straight_dir = fresh_dir("straight");
  const auto resumed_dir = fresh_dir("resumed");

  rlm::agents::PpoTrainer straight(small_config(800), straight_dir);
  const auto a = straight.train();
  REQUIRE(a.iterations == 4);

  {
    rlm::agents::PpoTrainer first_half(small_config(400), resumed_dir);
    REQUIRE(first_half.train().iterations == 2);
  }
  rlm::agents::PpoTrainer second_half(small_config(800), resumed_dir);
  second_half.resume();
  const auto b = second_half.train();
  REQUIRE(b.iterations == 4);
  CHECK(b.env_steps == a.env_steps);

  auto pa = straight.model()->named_parameters();
  auto pb = second_half.model()->named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (const auto& item : pa) {
    INFO(item.key());
    CHECK(torch::equal(item.value(), pb[item.key()]));
  }
  CHECK(metrics_without_timing(straight_dir) == metrics_without_timing(resumed_dir));

  // Sanity: training changed the parameters (a resume that restored nothing could not pass the checks above, and a
  // run that learned nothing would make them vacuous).
  rlm::agents::PpoTrainer untrained(small_config(800), fresh_dir("untrained"));
  bool any_changed = false;
  for (const auto& item : untrained.model()->named_parameters())
    any_changed |= !torch::equal(item.value(), pa[item.key()]);
  CHECK(any_changed);
  fs::remove_all(straight_dir);
  fs::remove_all(resumed_dir);
}

TEST_CASE("ppo: truncated or corrupt checkpoints give a CheckpointError", "[agents][resume]") {
  const auto dir = fresh_dir("corrupt");
  rlm::agents::PpoTrainer trainer(small_config(200), dir);
  trainer.train();
  const auto path = rlm::agents::latest_checkpoint(dir);
  REQUIRE(path.has_value());
  const auto size = fs::file_size(*path);

  fs::resize_file(*path, size / 2);
  rlm::agents::PpoTrainer again(small_config(400), dir);
  CHECK_THROWS_AS(again.resume(), rlm::CheckpointError);
  try {
    again.resume();
  } catch (const rlm::CheckpointError& e) {
    CHECK_THAT(e.what(), Catch::Contains("truncated"));
  }

  fs::remove(*path);
  CHECK_THROWS_AS(again.resume(), rlm::CheckpointError);  // no checkpoint left at all
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint of another format is refused, never read with defaults filled in", "[agents][resume]") {
  const auto dir = fresh_dir("format");
  rlm::agents::PpoTrainer trainer(small_config(200), dir);
  trainer.train();
  const auto path = rlm::agents::latest_checkpoint(dir);
  REQUIRE(path.has_value());
  torch::optim::Adam optimizer(trainer.model()->parameters());
  // No format key (as before it existed), an older format, and a state that is not even an object.
  for (const nlohmann::json& state :
       {nlohmann::json{{"iteration", 1}}, nlohmann::json{{"format", 1}, {"iteration", 1}}, nlohmann::json::array()}) {
    INFO(state.dump());
    rlm::agents::write_checkpoint(*path, rlm::agents::checkpoint_bytes(*trainer.model(), optimizer, state));
    rlm::agents::PpoTrainer again(small_config(400), dir);
    CHECK_THROWS_WITH(again.resume(), Catch::Contains("checkpoint format 1, and this rlm reads format 2 only"));
  }
  fs::remove_all(dir);
}

TEST_CASE("a trainer state with a field missing or mistyped is a CheckpointError naming both", "[agents][resume]") {
  const auto dir = fresh_dir("fields");
  rlm::agents::PpoTrainer trainer(small_config(200), dir);
  trainer.train();
  const auto path = rlm::agents::latest_checkpoint(dir);
  REQUIRE(path.has_value());
  torch::optim::Adam optimizer(trainer.model()->parameters());
  // The right format number, but no iteration, and then an iteration that is not a number.
  constexpr int format = rlm::agents::kCheckpointFormat;
  for (const auto& [state, field] :
       {std::pair{nlohmann::json{{"format", format}}, std::string("'iteration'")},
        {nlohmann::json{{"format", format}, {"iteration", "three"}}, std::string("number")}}) {
    INFO(state.dump());
    rlm::agents::write_checkpoint(*path, rlm::agents::checkpoint_bytes(*trainer.model(), optimizer, state));
    rlm::agents::PpoTrainer again(small_config(400), dir);
    try {
      again.resume();
      FAIL("resume accepted the trainer state");
    } catch (const rlm::CheckpointError& e) {
      CHECK_THAT(e.what(),
                 Catch::Contains(path->string()) && Catch::Contains("trainer state") && Catch::Contains(field));
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("ppo: results do not depend on the number of env worker threads", "[agents][threads]") {
  auto one = small_config(400);
  auto two = small_config(400);
  one.env.num_threads = 1;
  two.env.num_threads = 2;
  rlm::agents::PpoTrainer a(one, fresh_dir("threads1"));
  rlm::agents::PpoTrainer b(two, fresh_dir("threads2"));
  const auto ra = a.train();
  const auto rb = b.train();
  CHECK(ra.env_steps == rb.env_steps);
  CHECK(ra.last_return_mean == rb.last_return_mean);
  auto pb = b.model()->named_parameters();
  for (const auto& item : a.model()->named_parameters()) {
    INFO(item.key());
    CHECK(torch::equal(item.value(), pb[item.key()]));
  }
}
