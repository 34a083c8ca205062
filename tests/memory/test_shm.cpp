// SHM backend: stepping equals sequence mode (same θ draws under the same seed), resets, gradients, the parameter
// layout, every calibration option, and a supervised recall task it must learn.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "memory/recall_first_task.hpp"
#include "memory/shm.hpp"

using rlm::memory::MemoryState;
using rlm::memory::Shm;
using rlm::memory::ShmOptions;

namespace {

ShmOptions small_options() {
  ShmOptions o;
  o.memory_size = 6;
  o.output_size = 5;
  o.num_thetas = 8;
  return o;
}

torch::Tensor run_stepwise(Shm& shm, const torch::Tensor& x, MemoryState state, const torch::Tensor& starts,
                           MemoryState* final_state = nullptr) {
  std::vector<torch::Tensor> outs;
  for (int64_t t = 0; t < x.size(0); ++t) {
    auto step = shm.forward(x.slice(0, t, t + 1), state, starts.slice(0, t, t + 1));
    outs.push_back(step.y);
    state = step.state;
  }
  if (final_state != nullptr) *final_state = state;
  return torch::cat(outs, 0);
}

}  // namespace

TEST_CASE("shm: stepping one step at a time equals one call over the sequence", "[memory][shm]") {
  for (const char* calibration : {"random_theta", "fixed_theta", "neural_theta", "ones", "fixed_c"}) {
    INFO("calibration " << calibration);
    torch::manual_seed(1);
    auto options = small_options();
    options.calibration = calibration;
    Shm shm(7, options);
    const int64_t steps = 10, batch = 3;
    auto x = torch::randn({steps, batch, 7});
    auto starts = torch::zeros({steps, batch}, torch::kBool);
    starts[0].fill_(true);
    starts[4][1] = true;
    starts[7][0] = starts[7][2] = true;
    auto h0 = MemoryState{{torch::randn({batch, 6, 6})}};
    // Same seed before each run: the θ rows drawn per (t, b) are the same in both modes.
    torch::manual_seed(42);
    auto whole = shm.forward(x, h0, starts);
    torch::manual_seed(42);
    MemoryState last;
    auto stepped = run_stepwise(shm, x, h0, starts, &last);
    CHECK(torch::allclose(whole.y, stepped, 1e-5, 1e-6));
    CHECK(torch::allclose(whole.state.tensors[0], last.tensors[0], 1e-5, 1e-6));
  }
}

TEST_CASE("shm: acting without gradient (one step at a time) equals the training forward", "[memory][shm]") {
  torch::manual_seed(5);
  auto options = small_options();
  options.state_clamp = 0.5;  // exercised on both paths
  Shm shm(7, options);
  auto x = torch::randn({9, 2, 7});
  auto starts = torch::zeros({9, 2}, torch::kBool);
  starts[3][0] = true;
  auto h0 = MemoryState{{torch::randn({2, 6, 6})}};
  torch::manual_seed(8);
  auto whole = shm.forward(x, h0, starts);
  torch::manual_seed(8);
  MemoryState last;
  torch::Tensor stepped;
  {
    torch::NoGradGuard no_grad;
    stepped = run_stepwise(shm, x, h0, starts, &last);
  }
  CHECK(torch::allclose(whole.y, stepped, 1e-5, 1e-6));
  CHECK(torch::allclose(whole.state.tensors[0], last.tensors[0], 1e-5, 1e-6));
}

TEST_CASE("shm: random theta rows differ between draws and index0_compat always uses row 0", "[memory][shm]") {
  torch::manual_seed(3);
  Shm shm(4, small_options());
  auto x = torch::randn({20, 4, 4});
  auto starts = torch::zeros({20, 4}, torch::kBool);
  auto state = shm.initial_state(4, torch::kCPU);
  torch::manual_seed(1);
  auto a = shm.forward(x, state, starts).y;
  torch::manual_seed(2);
  auto b = shm.forward(x, state, starts).y;
  CHECK_FALSE(torch::allclose(a, b, 1e-6, 1e-6));  // different draws, different memories

  auto options = small_options();
  options.theta_sampling = "index0_compat";
  torch::manual_seed(3);
  Shm compat(4, options);
  torch::manual_seed(1);
  auto c = compat.forward(x, state, starts).y;
  torch::manual_seed(2);
  auto d = compat.forward(x, state, starts).y;
  CHECK(torch::allclose(c, d));  // no randomness left
  // Only row 0 of the table receives gradient.
  c.sum().backward();
  const auto grad = compat.named_parameters()["theta_table"].grad();
  CHECK(grad[0].abs().sum().item<double>() > 0);
  CHECK(grad.slice(0, 1).abs().sum().item<double>() == 0);
}

TEST_CASE("shm: a reset equals a fresh zero state", "[memory][shm]") {
  torch::manual_seed(2);
  auto options = small_options();
  options.calibration = "fixed_theta";  // deterministic, so the two runs are comparable
  Shm shm(4, options);
  auto prefix = torch::randn({5, 2, 4});
  auto episode = torch::randn({7, 2, 4});
  auto starts = torch::zeros({12, 2}, torch::kBool);
  starts[5].fill_(true);
  auto with_history = shm.forward(torch::cat({prefix, episode}, 0), shm.initial_state(2, torch::kCPU), starts);
  auto fresh = shm.forward(episode, shm.initial_state(2, torch::kCPU), torch::zeros({7, 2}, torch::kBool));
  CHECK(torch::allclose(with_history.y.slice(0, 5), fresh.y, 1e-5, 1e-6));
  auto no_reset = shm.forward(torch::cat({prefix, episode}, 0), shm.initial_state(2, torch::kCPU),
                              torch::zeros({12, 2}, torch::kBool));
  CHECK_FALSE(torch::allclose(no_reset.y.slice(0, 5), fresh.y, 1e-4, 1e-4));
}

TEST_CASE("shm: gradients reach every parameter of every calibration option", "[memory][shm]") {
  for (const char* calibration : {"random_theta", "fixed_theta", "neural_theta", "ones", "fixed_c", "random_c"}) {
    INFO("calibration " << calibration);
    torch::manual_seed(4);
    auto options = small_options();
    options.calibration = calibration;
    options.num_thetas = 2;  // 2 rows over 16·3 draws: both rows are drawn
    Shm shm(5, options);
    auto x = torch::randn({16, 3, 5});
    auto starts = torch::zeros({16, 3}, torch::kBool);
    auto out = shm.forward(x, shm.initial_state(3, torch::kCPU), starts);
    (out.y * torch::randn(out.y.sizes())).sum().backward();
    for (const auto& p : shm.named_parameters()) {
      INFO("parameter " << p.key());
      REQUIRE(p.value().grad().defined());
      CHECK(p.value().grad().abs().sum().item<double>() > 0);
    }
  }
}

TEST_CASE("shm: parameter layout at POPGym sizes", "[memory][shm]") {
  // D = 64 (the preprocessor's width) and out 1024 (thaihungle/SHM@651f9e2:train_popgym.py), H = 128 and L = 128
  // (SHM paper §4.4 and §4):
  // LayerNorm 2D + k, q, v, vc, η (D·(4H + 1), no bias) + θ table L·H + shortcut D·H + H + out H·1024 + 1024.
  Shm shm(64, ShmOptions{});
  int64_t count = 0;
  for (const auto& p : shm.parameters()) count += p.numel();
  CHECK(count == 2 * 64 + 64 * (4 * 128 + 1) + 128 * 128 + 64 * 128 + 128 + 128 * 1024 + 1024);
  CHECK(shm.output_size() == 1024);
}

TEST_CASE("shm: unknown options are config errors", "[memory][shm]") {
  auto options = small_options();
  options.calibration = "random";
  CHECK_THROWS_AS(Shm(4, options), rlm::ConfigError);
  options = small_options();
  options.theta_sampling = "index0";
  CHECK_THROWS_AS(Shm(4, options), rlm::ConfigError);
}

TEST_CASE("shm learns to recall the first token of a sequence", "[memory][shm][sanity][slow]") {
  // 4 token classes, sequences of 10 one-hot tokens; the label is the first token, read out at the last step.
  torch::set_num_threads(1);
  torch::manual_seed(0);
  ShmOptions options;
  options.memory_size = 16;
  options.output_size = 32;
  Shm shm(4, options);
  const double accuracy = rlm::test::learn_recall_first(shm, /*classes=*/4, /*steps=*/10, /*max_updates=*/1500);
  INFO("accuracy " << accuracy);
  CHECK(accuracy >= 0.95);
}
