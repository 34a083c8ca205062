// The image encoder (model.encoder: cnn): it reads the leading C·H·W values as a CHW image exactly as the env wrote
// them, passes the rest through, and both trainers run with it on a pixel env (Visual Match), the off-policy replay
// storing those pixels as bytes. Wrong uses are config errors naming model.encoder / model.cnn.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "agents/experiment_config.hpp"
#include "agents/image_encoder.hpp"
#include "agents/off_policy.hpp"
#include "agents/ppo.hpp"
#include "core/error.hpp"
#include "envs/vec_env.hpp"
#include "run_dir_util.hpp"

using rlm::agents::ImageEncoder;
using rlm::agents::ObservationLayout;
using rlm::test::fresh_dir;

namespace {

ObservationLayout pixel_layout(int64_t extra) { return ObservationLayout(75 + extra, {3, 5, 5}, rlm::CnnConfig{}); }

/// A tiny run on Passive Visual Match with a short distractor phase.
rlm::Config pixel_config(const std::string& type) {
  rlm::Config c;
  c.experiment.seed = 3;
  c.experiment.device = "cpu";
  c.experiment.torch_threads = 1;
  c.env.id = "memory_rl/PassiveVisualMatch";
  c.env.options.distractor_length = 4;  // 15 + 4 + 10 = 29 steps
  c.env.num_envs = 2;
  c.model.encoder = "cnn";
  c.model.cnn.embedding_size = 16;
  c.model.memory.hidden_size = 16;
  c.model.ppo.feature_size = 16;
  c.model.ppo.preprocessor_size = 16;
  c.model.ppo.head_sizes = {16};
  c.model.off_policy.actor_layers = {16};
  c.model.off_policy.critic_layers = {16};
  c.algo.type = type;
  c.algo.total_steps = 4 * 29 * 2;
  c.algo.ppo.steps_per_env = 29;
  c.algo.ppo.minibatch_size = 58;
  c.algo.off_policy.batch_size = 4;
  c.algo.off_policy.warmup_episodes = 2;
  c.algo.off_policy.updates_per_step = 0.2;
  c.algo.off_policy.eval_interval = 4;
  c.algo.off_policy.eval_episodes = 2;
  c.logging.tensorboard = false;
  c.logging.console = false;
  c.checkpoint.replay_buffer = false;
  return c;
}

std::string config_error(const rlm::Config& c) {
  try {
    rlm::agents::PpoTrainer trainer(c, fresh_dir("cnn-bad"));
  } catch (const rlm::ConfigValueError& e) {
    return e.key + ": " + e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("image encoder: shapes and the values after the image pass through", "[agents][cnn]") {
  torch::manual_seed(0);
  ImageEncoder encoder(pixel_layout(5));
  CHECK(encoder->output_size() == 100 + 5);
  const auto obs = torch::randint(0, 256, {3, 4, 80}).to(torch::kFloat32);
  const auto out = encoder->forward(obs);
  CHECK(out.sizes() == torch::IntArrayRef({3, 4, 105}));
  CHECK(torch::equal(out.narrow(-1, 100, 5), obs.narrow(-1, 75, 5)));
}

TEST_CASE("image encoder: the pixels are read as a CHW image divided by 255", "[agents][cnn]") {
  // The references' ImageEncoder on the same weights: reshape (C, H, W), /255, conv + ReLU twice, flatten, Linear.
  torch::manual_seed(1);
  ImageEncoder encoder(pixel_layout(0));
  const auto obs = torch::randint(0, 256, {6, 75}).to(torch::kFloat32);
  auto x = obs.view({6, 3, 5, 5}) / 255.0;
  const auto params = encoder->named_parameters();
  x = torch::relu(torch::conv2d(x, params["convs.0.weight"], params["convs.0.bias"]));
  x = torch::relu(torch::conv2d(x, params["convs.2.weight"], params["convs.2.bias"]));
  CHECK(x.sizes() == torch::IntArrayRef({6, 16, 3, 3}));  // 3×5×5 -> 16×3×3 = 144
  const auto expected = torch::linear(x.flatten(1), params["linear.weight"], params["linear.bias"]);
  CHECK(torch::allclose(encoder->forward(obs), expected, 1e-6, 1e-6));

  // Moving one pixel of channel 1 changes the output; the channel-major position of that pixel is what it reads.
  auto other = obs.clone();
  other.index_put_({0, 25 + 7}, 255.0 - other.index({0, 25 + 7}));
  const auto a = encoder->forward(obs), b = encoder->forward(other);
  CHECK_FALSE(torch::allclose(a[0], b[0]));
  CHECK(torch::equal(a.narrow(0, 1, 5), b.narrow(0, 1, 5)));
}

TEST_CASE("image encoder: config errors name model.encoder or model.cnn", "[agents][cnn]") {
  auto vector_env = pixel_config("ppo");
  vector_env.env.id = "popgym/RepeatFirstEasy";
  vector_env.env.options = {};
  CHECK_THAT(
      config_error(vector_env),
      Catch::Contains("model.encoder: model.encoder = cnn needs an image observation") && Catch::Contains("(use mlp)"));
  auto too_big = pixel_config("ppo");
  too_big.model.cnn.kernel_sizes = {4, 4};
  CHECK_THAT(config_error(too_big), Catch::Contains("model.cnn.kernel_sizes") && Catch::Contains("5x5 image"));
  CHECK_THROWS_WITH(rlm::parse_config("model:\n  encoder: cnn\n  cnn:\n    channels: [8]\n", "x.yaml"),
                    Catch::Contains("model.cnn") && Catch::Contains("one entry per convolution"));
  CHECK_THROWS_WITH(rlm::parse_config("model:\n  cnn:\n    embedding_size: 64\n", "x.yaml"),
                    Catch::Contains("only model.encoder: cnn uses"));
}

TEST_CASE("image encoder: PPO and SAC-D train on Visual Match pixels", "[agents][cnn]") {
  for (const std::string type : {"ppo", "sacd"}) {
    INFO(type);
    const auto config = pixel_config(type);
    const auto dir = fresh_dir("cnn-" + type);
    if (type == "ppo") {
      rlm::agents::PpoTrainer trainer(config, dir);
      const auto before = trainer.model()->named_parameters()["image_encoder.linear.weight"].clone();
      const auto summary = trainer.train();
      CHECK(summary.env_steps == config.algo.total_steps);
      CHECK_FALSE(torch::equal(before, trainer.model()->named_parameters()["image_encoder.linear.weight"]));
    } else {
      rlm::agents::OffPolicyTrainer trainer(config, dir);
      const auto params = trainer.agent()->named_parameters();
      const auto before = params["critic.encoder.image_encoder.linear.weight"].clone();
      const auto summary = trainer.train();
      CHECK(summary.env_steps >= config.algo.total_steps);
      CHECK(trainer.updates() > 0);
      CHECK_FALSE(
          torch::equal(before, trainer.agent()->named_parameters()["critic.encoder.image_encoder.linear.weight"]));
      CHECK(trainer.replay().options().byte_observations);  // pixels and one-hots: a byte per value
    }
    // `rlm eval` builds the run's network again, image encoder included, loads its checkpoint and acts.
    rlm::envs::VecEnv envs(config.env.id, 2, 1, 7, rlm::envs::wrapper_options(config.env), config.env.options);
    const auto spec = rlm::agents::ActionSpec::from_space(envs.action_space(), config.env.id);
    auto loaded = rlm::agents::load_policy(config, envs, dir, "", torch::kCPU, {});
    int64_t episodes = 0;
    rlm::agents::run_episodes(envs, *loaded.policy, spec, rlm::agents::episode_quota(2, envs.num_envs()),
                              at::detail::createCPUGenerator(3), [&](rlm::agents::EpisodeRecord&&) { ++episodes; },
                              {.deterministic = true});
    CHECK(episodes == 2);
    std::filesystem::remove_all(dir);
  }
}
