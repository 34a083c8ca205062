// What keeps a run trustworthy when things go wrong: a checkpoint is checked tensor by tensor before it is loaded,
// resume falls back past a corrupt newest checkpoint, a diverging run stops without checkpointing the bad state, a
// stop inside an iteration resumes bitwise, and a resume applies a new learning rate.
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
  c.experiment.seed = 5;
  c.experiment.device = "cpu";
  c.experiment.torch_threads = 1;
  c.env.id = "popgym/RepeatFirstEasy";
  c.env.num_envs = 4;
  c.model.ppo.feature_size = 16;
  c.model.ppo.preprocessor_size = 16;
  c.model.ppo.head_sizes = {16};
  c.model.memory.hidden_size = 16;
  c.algo.total_steps = total_steps;
  c.algo.ppo.steps_per_env = 32;  // one 51-step episode per env: 204 steps per iteration
  c.algo.ppo.minibatch_size = 102;
  c.algo.ppo.epochs = 2;
  c.algo.ppo.lr = 1e-3;
  c.logging.tensorboard = false;
  c.logging.console = false;
  c.checkpoint.every = 2;
  c.checkpoint.keep_last = 5;
  return c;
}

void check_same_parameters(rlm::agents::PpoTrainer& a, rlm::agents::PpoTrainer& b) {
  auto pb = b.model()->named_parameters();
  for (const auto& item : a.model()->named_parameters()) {
    INFO(item.key());
    CHECK(torch::equal(item.value(), pb[item.key()]));
  }
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a checkpoint of another architecture names the first tensor that differs", "[agents][checkpoint]") {
  const auto dir = fresh_dir("shape");
  rlm::agents::PpoTrainer trainer(small_config(200), dir);
  trainer.train();
  const auto path = rlm::agents::latest_checkpoint(dir);
  REQUIRE(path);

  auto wider = small_config(200);
  wider.model.memory.hidden_size = 32;
  rlm::agents::PpoTrainer other(wider, fresh_dir("shape-other"));
  const auto before = other.model()->parameters()[0].clone();
  const std::string message = error_of([&] { rlm::agents::load_checkpoint(*path, *other.model(), nullptr); });
  CHECK_THAT(message, Catch::Contains("ckpt_00000001.rlmckpt': tensor '") && Catch::Contains("has shape [") &&
                          Catch::Contains("the model's has ["));
  CHECK(torch::equal(before, other.model()->parameters()[0]));  // nothing was loaded

  auto with_post = small_config(200);
  with_post.model.ppo.postprocessor_size = 8;  // a layer the checkpoint does not have
  rlm::agents::PpoTrainer third(with_post, fresh_dir("shape-third"));
  CHECK_THAT(error_of([&] { rlm::agents::load_checkpoint(*path, *third.model(), nullptr); }),
             Catch::Contains("is missing"));
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint with non-finite parameters is rejected", "[agents][checkpoint]") {
  const auto dir = fresh_dir("nan");
  rlm::agents::PpoTrainer trainer(small_config(200), dir);
  {
    torch::NoGradGuard no_grad;
    trainer.model()->parameters()[3].view(-1)[0] = std::nan("");
  }
  const auto path = rlm::agents::checkpoint_path(dir, 7);
  rlm::agents::save_checkpoint(path, *trainer.model(), trainer.optimizer(), {{"iteration", 7}});
  rlm::agents::PpoTrainer fresh(small_config(200), fresh_dir("nan-fresh"));
  CHECK_THAT(error_of([&] { rlm::agents::load_checkpoint(path, *fresh.model(), nullptr); }),
             Catch::Contains("holds non-finite values"));
  fs::remove_all(dir);
}

TEST_CASE("resume falls back past a corrupt newest checkpoint and still resumes bitwise", "[agents][resume]") {
  const auto straight_dir = fresh_dir("fallback-straight");
  const auto dir = fresh_dir("fallback");
  rlm::agents::PpoTrainer straight(small_config(1000), straight_dir);
  REQUIRE(straight.train().iterations == 5);
  {
    rlm::agents::PpoTrainer first(small_config(800), dir);
    REQUIRE(first.train().iterations == 4);  // checkpoints at 2 and 4
  }
  const auto newest = rlm::agents::checkpoint_path(dir, 4);
  REQUIRE(fs::exists(newest));
  {
    std::fstream f(newest, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    f.put('\x55');  // one damaged byte: the checksum fails
  }
  rlm::agents::PpoTrainer resumed(small_config(1000), dir);
  const auto report = resumed.resume();
  CHECK(report.checkpoint == rlm::agents::checkpoint_path(dir, 2));
  REQUIRE(report.skipped.size() == 1);
  CHECK(report.skipped[0].first == newest);
  CHECK_THAT(report.skipped[0].second, Catch::Contains("checksum"));
  REQUIRE(resumed.train().iterations == 5);
  check_same_parameters(straight, resumed);
  CHECK(metrics_without_timing(straight_dir) == metrics_without_timing(dir));
  fs::remove_all(straight_dir);
  fs::remove_all(dir);
}

TEST_CASE("a diverging run stops with the iteration named and its bad state never checkpointed",
          "[agents][divergence]") {
  const auto dir = fresh_dir("diverge");
  auto config = small_config(2000);
  config.algo.ppo.lr = 1e30;
  config.checkpoint.every = 100;
  rlm::agents::PpoTrainer trainer(config, dir);
  const std::string message = error_of([&] { trainer.train(); });
  CHECK_THAT(message, Catch::StartsWith("training diverged in iteration 1: ") &&
                          Catch::Contains("nothing of it was checkpointed, --resume continues from"));
  // The only checkpoint is the state the iteration started from, and it loads (every tensor finite).
  const auto checkpoints = rlm::agents::checkpoints_newest_first(dir);
  REQUIRE(checkpoints.size() == 1);
  CHECK(checkpoints[0] == rlm::agents::checkpoint_path(dir, 0));
  rlm::agents::PpoTrainer fresh(small_config(200), fresh_dir("diverge-fresh"));
  CHECK_NOTHROW(rlm::agents::load_checkpoint(checkpoints[0], *fresh.model(), nullptr));
  CHECK_FALSE((fs::exists(dir / "metrics.jsonl") && fs::file_size(dir / "metrics.jsonl") > 0));
  fs::remove_all(dir);
}

TEST_CASE("the KL guard stops a run whose policy moves further than algo.ppo.max_kl", "[agents][divergence]") {
  auto config = small_config(2000);
  config.algo.ppo.max_kl = 1e-12;  // any real update exceeds this
  rlm::agents::PpoTrainer trainer(config, fresh_dir("kl"));
  CHECK_THAT(error_of([&] { trainer.train(); }), Catch::Contains("above algo.ppo.max_kl = 1e-12"));
  config.algo.ppo.max_kl = 0;  // off
  config.algo.total_steps = 400;
  CHECK_NOTHROW(rlm::agents::PpoTrainer(config, fresh_dir("kl-off2")).train());
}

TEST_CASE("a stop inside an iteration keeps the state it started from and resumes bitwise", "[agents][resume]") {
  const auto straight_dir = fresh_dir("stop-straight");
  const auto dir = fresh_dir("stop");
  auto config = small_config(1000);
  config.checkpoint.every = 100;  // no periodic checkpoint: only the stop writes one
  rlm::agents::PpoTrainer straight(config, straight_dir);
  REQUIRE(straight.train().iterations == 5);

  // stop_requested is asked at each of an iteration's 51 rollout steps, its 4 minibatches and its end: 56 checks.
  for (int stop_at : {20, 109}) {  // inside iteration 1's rollout, and inside iteration 2's update
    INFO("stop at check " << stop_at);
    fs::remove_all(dir);
    int calls = 0;
    {
      rlm::agents::PpoTrainer first(config, dir);
      const auto summary = first.train([&] { return ++calls >= stop_at; });
      CHECK(summary.interrupted);
    }
    const auto checkpoints = rlm::agents::checkpoints_newest_first(dir);
    REQUIRE(checkpoints.size() == 1);
    rlm::agents::PpoTrainer resumed(config, dir);
    resumed.resume();
    REQUIRE(resumed.train().iterations == 5);
    check_same_parameters(straight, resumed);
    CHECK(metrics_without_timing(straight_dir) == metrics_without_timing(dir));
  }
  fs::remove_all(straight_dir);
  fs::remove_all(dir);
}

TEST_CASE("resume applies the config's learning rate to the restored optimizer", "[agents][resume]") {
  const auto dir = fresh_dir("lr");
  {
    rlm::agents::PpoTrainer first(small_config(200), dir);
    first.train();
  }
  auto config = small_config(400);
  config.algo.ppo.lr = 2.5e-4;
  config.algo.ppo.adam_eps = 1e-5;
  rlm::agents::PpoTrainer resumed(config, dir);
  resumed.resume();
  for (auto& group : resumed.optimizer().param_groups()) {
    const auto& options = static_cast<torch::optim::AdamOptions&>(group.options());
    CHECK(options.lr() == 2.5e-4);
    CHECK(options.eps() == 1e-5);
  }
  fs::remove_all(dir);
}

TEST_CASE("temp files of interrupted writes are removed, checkpoints are not", "[agents][checkpoint]") {
  const auto dir = fresh_dir("leftovers");
  fs::create_directories(dir / "checkpoints");
  for (const char* name : {"checkpoints/.ckpt_00000004.rlmckpt.tmp.123.0", "checkpoints/.ckpt_00000006.rlmckpt.tmp.9.2",
                           ".metrics.jsonl.tmp.77.1", "checkpoints/ckpt_00000002.rlmckpt", "metrics.jsonl"}) {
    std::ofstream(dir / name) << "x";
  }
  CHECK(rlm::agents::remove_interrupted_writes(dir) == 3);
  CHECK(fs::exists(dir / "checkpoints/ckpt_00000002.rlmckpt"));
  CHECK(fs::exists(dir / "metrics.jsonl"));
  CHECK_FALSE(fs::exists(dir / "checkpoints/.ckpt_00000004.rlmckpt.tmp.123.0"));
  fs::remove_all(dir);
}
