// GRU backend: stepping with T = 1 equals sequence mode, resets inside a sequence equal a fresh state.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "memory/gru.hpp"
#include "memory/recall_first_task.hpp"
#include "memory/registry.hpp"

using rlm::memory::Gru;
using rlm::memory::MemoryState;

TEST_CASE("gru: stepping one step at a time equals one call over the sequence", "[memory][gru]") {
  torch::manual_seed(1);
  Gru gru(5, 8);
  const int64_t steps = 12, batch = 3;
  auto x = torch::randn({steps, batch, 5});
  auto starts = torch::zeros({steps, batch}, torch::kBool);
  starts[0].fill_(true);
  starts[4][1] = true;  // batch entry 1 starts a new episode at t = 4
  starts[9][0] = true;
  starts[9][2] = true;

  auto h0 = MemoryState{{torch::randn({batch, 8})}};
  auto whole = gru.forward(x, h0, starts);

  MemoryState state = h0;
  std::vector<torch::Tensor> outs;
  for (int64_t t = 0; t < steps; ++t) {
    auto step = gru.forward(x.slice(0, t, t + 1), state, starts.slice(0, t, t + 1));
    outs.push_back(step.y);
    state = step.state;
  }
  auto stepped = torch::cat(outs, 0);
  REQUIRE(whole.y.sizes() == stepped.sizes());
  CHECK(torch::allclose(whole.y, stepped, 1e-6, 1e-6));
  CHECK(torch::allclose(whole.state.tensors[0], state.tensors[0], 1e-6, 1e-6));
}

TEST_CASE("gru: a reset equals a fresh zero state", "[memory][gru]") {
  torch::manual_seed(2);
  Gru gru(4, 6);
  auto prefix = torch::randn({5, 2, 4});
  auto episode = torch::randn({7, 2, 4});
  // Run some history, then an episode that starts with a reset...
  auto starts = torch::zeros({12, 2}, torch::kBool);
  starts[5].fill_(true);
  auto with_history = gru.forward(torch::cat({prefix, episode}, 0), gru.initial_state(2, torch::kCPU), starts);
  // ...which must equal the same episode from a zero state with no history at all.
  auto fresh = gru.forward(episode, gru.initial_state(2, torch::kCPU), torch::zeros({7, 2}, torch::kBool));
  CHECK(torch::allclose(with_history.y.slice(0, 5), fresh.y, 1e-6, 1e-6));
  // Without the reset the history changes the output (the test can fail).
  auto no_reset = gru.forward(torch::cat({prefix, episode}, 0), gru.initial_state(2, torch::kCPU),
                              torch::zeros({12, 2}, torch::kBool));
  CHECK_FALSE(torch::allclose(no_reset.y.slice(0, 5), fresh.y, 1e-4, 1e-4));
}

TEST_CASE("gru: gradients reach every parameter, registry builds it", "[memory][gru]") {
  rlm::MemoryConfig config;
  config.type = "gru";
  config.hidden_size = 16;
  auto memory = rlm::memory::make_memory(config, 3);
  CHECK(memory->output_size() == 16);
  auto x = torch::randn({6, 2, 3});
  auto starts = torch::zeros({6, 2}, torch::kBool);
  auto out = memory->forward(x, memory->initial_state(2, torch::kCPU), starts);
  out.y.sum().backward();
  for (const auto& p : memory->parameters()) {
    REQUIRE(p.grad().defined());
    CHECK(p.grad().abs().sum().item<double>() > 0.0);
  }
  rlm::MemoryConfig bad;
  bad.type = "nope";
  CHECK_THROWS_AS(rlm::memory::make_memory(bad, 3), rlm::ConfigError);
}

TEST_CASE("gru learns to recall the first token of a sequence", "[memory][gru][sanity]") {
  // The same supervised task as the other backends' sanity tests: 4 token classes, 10 one-hot tokens per sequence,
  // the label is the first token, read out at the last step. Chance is 25%.
  torch::set_num_threads(1);
  torch::manual_seed(0);
  Gru gru(4, 32);
  const double accuracy = rlm::test::learn_recall_first(gru, /*classes=*/4, /*steps=*/10, /*max_updates=*/2000);
  INFO("accuracy " << accuracy);
  CHECK(accuracy >= 0.95);
}
