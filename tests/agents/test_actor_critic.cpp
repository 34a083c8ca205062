// The network around the memory: episode positions for the sine embedding, stepping equals sequence mode with the
// embedding and a post-processor, and the SHM-code layout (ReLU, post Linear, heads without activation).
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "agents/actor_critic.hpp"
#include "agents/experiment_config.hpp"

using rlm::agents::ActorCritic;
using rlm::agents::episode_positions;

TEST_CASE("episode positions count from each start and carry across calls", "[agents][embedding]") {
  // Entry 0 starts at t = 0 and t = 3; entry 1 never starts in this call and had taken 5 steps before it.
  auto starts = torch::zeros({5, 2}, torch::kBool);
  starts[0][0] = true;
  starts[3][0] = true;
  auto [positions, count] = episode_positions(starts, torch::tensor({7, 5}, torch::kLong));
  CHECK(torch::equal(positions.select(1, 0), torch::tensor({0, 1, 2, 0, 1}, torch::kLong)));
  CHECK(torch::equal(positions.select(1, 1), torch::tensor({5, 6, 7, 8, 9}, torch::kLong)));
  CHECK(torch::equal(count, torch::tensor({2, 10}, torch::kLong)));
}

TEST_CASE("actor-critic with sine embedding and post-processor: stepping equals the sequence", "[agents][embedding]") {
  torch::manual_seed(3);
  rlm::ModelConfig config;
  config.ppo.feature_size = 16;
  config.ppo.preprocessor_size = 8;
  config.ppo.head_sizes = {8};
  config.ppo.activation = "relu";
  config.ppo.postprocessor_size = 6;
  config.ppo.head_activation = "none";
  config.ppo.embedding = "sine";
  config.ppo.embedding_max_len = 32;
  config.memory.type = "gru";
  config.memory.hidden_size = 12;
  ActorCritic model(5, 3, config);
  const int64_t steps = 9, batch = 2;
  auto obs = torch::randn({steps, batch, 5});
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[0].fill_(true);
  starts[4][1] = true;
  auto whole = model->forward(obs, model->initial_state(batch, torch::kCPU), starts);
  auto state = model->initial_state(batch, torch::kCPU);
  std::vector<torch::Tensor> logits;
  for (int64_t t = 0; t < steps; ++t) {
    auto out = model->forward(obs.slice(0, t, t + 1), state, starts.slice(0, t, t + 1));
    logits.push_back(out.logits);
    state = out.state;
  }
  CHECK(torch::allclose(whole.logits, torch::cat(logits, 0), 1e-5, 1e-6));
  CHECK(torch::equal(state.tensors.back(), torch::tensor({9, 5}, torch::kLong)));  // steps since each start
  // The embedding matters: the same observations at other positions give other outputs.
  auto shifted_state = model->initial_state(batch, torch::kCPU);
  shifted_state.tensors.back().fill_(20);
  auto shifted = model->forward(obs.slice(0, 1), shifted_state, torch::zeros({steps - 1, batch}, torch::kBool));
  auto unshifted = model->forward(obs.slice(0, 1), whole.state, torch::zeros({steps - 1, batch}, torch::kBool));
  CHECK_FALSE(torch::allclose(shifted.values, unshifted.values, 1e-6, 1e-6));
}

TEST_CASE("actor-critic: the SHM-code layout has the modules it names", "[agents][embedding]") {
  rlm::ModelConfig config;
  config.ppo.feature_size = 128;
  config.ppo.preprocessor_size = 64;
  config.ppo.head_sizes = {64};
  config.ppo.activation = "relu";
  config.ppo.postprocessor_size = 64;
  config.ppo.head_activation = "none";
  config.ppo.embedding = "sine";
  config.memory.type = "gru";
  config.memory.hidden_size = 32;
  ActorCritic model(10, 4, config);
  auto params = model->named_parameters();
  CHECK(params.contains("post.0.weight"));
  CHECK(params["post.0.weight"].sizes() == torch::IntArrayRef({64, 32}));
  CHECK(params["actor.0.weight"].sizes() == torch::IntArrayRef({64, 64}));
  CHECK(params["actor.1.weight"].sizes() == torch::IntArrayRef({4, 64}));  // no activation module in between
  CHECK(params.contains("embedding_scale"));
  CHECK(model->named_buffers()["sine_table"].sizes() == torch::IntArrayRef({1024, 128}));
  // Row 0 of the sine table is sin(0) = 0, cos(0) = 1 interleaved.
  auto row0 = model->named_buffers()["sine_table"][0];
  CHECK(row0[0].item<float>() == 0.0f);
  CHECK(row0[1].item<float>() == 1.0f);
}
