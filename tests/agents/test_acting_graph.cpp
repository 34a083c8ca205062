// ActingGraph (agents/acting_graph.hpp), PPO's acting step replayed from a CUDA graph where it can be: whatever it
// decides, its steps must equal the model stepped eagerly with T = 1 (as RolloutPolicy does without it), through
// episode starts and the state carried from step to step. On the CPU it always stays eager (the guard: the reason is
// checked), and the outputs must then be bitwise the eager ones; on a GPU (scripts/gpu_check.sh) GRU and FFM must
// replay, within float rounding of eager, while SHM, whose acting draws θ rows, must not.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "agents/acting_graph.hpp"
#include "agents/trainer.hpp"
#include "memory/registry.hpp"

namespace {

struct Compared {
  bool replaying = false;
  std::string reason;
};

/// Steps a fresh model of memory `type` on `device` both ways over the same obs and starts and compares each step's
/// logits, values and state.
Compared compare_with_eager(const std::string& type, const torch::Device& device) {
  INFO("backend " << type << " on " << device);
  rlm::ModelConfig config;
  config.ppo.feature_size = 16;
  config.ppo.preprocessor_size = 16;
  config.ppo.head_sizes = {16};
  config.memory.type = type;
  config.memory.hidden_size = 16;
  config.memory.shm.output_size = 12;
  config.memory.ffm.memory_size = 8;
  config.memory.kf.state_size = 8;
  config.memory.stm.item_size = 8;
  config.memory.stm.num_slots = 2;
  config.memory.stm.rel_size = 8;
  torch::manual_seed(5);
  rlm::agents::ActorCritic model(6, 3, config);
  model->to(device);
  model->eval();
  torch::NoGradGuard no_grad;
  const int64_t steps = 12, batch = 4;
  const auto obs = torch::randn({steps, batch, 6});
  auto starts = torch::rand({steps, batch}) < 0.2;
  starts[0].fill_(true);

  // Eager, as RolloutPolicy steps without a graph; the memories' draws from the same seeded streams both times.
  rlm::agents::seed_memory_streams(*model, 11);
  std::vector<rlm::agents::ActorCriticOutput> eager;
  auto state = model->initial_state(batch, device);
  for (int64_t t = 0; t < steps; ++t) {
    eager.push_back(model->forward(obs[t].unsqueeze(0).to(device), state, starts[t].unsqueeze(0).to(device)));
    state = rlm::memory::detach(eager.back().state);
  }

  rlm::agents::seed_memory_streams(*model, 11);
  rlm::agents::ActingGraph graph(model, device, batch, 6);
  graph.set_state(model->initial_state(batch, device));
  for (int64_t t = 0; t < steps; ++t) {
    INFO("step " << t);
    const auto& out = graph.step(obs[t], starts[t]);
    const auto& want = eager[static_cast<size_t>(t)];
    if (device.is_cuda()) {
      CHECK(torch::allclose(out.logits, want.logits, 1e-4, 1e-5));
      CHECK(torch::allclose(out.values, want.values, 1e-4, 1e-5));
    } else {
      CHECK(torch::equal(out.logits, want.logits));
      CHECK(torch::equal(out.values, want.values));
    }
    REQUIRE(out.state.tensors.size() == want.state.tensors.size());
    for (size_t i = 0; i < out.state.tensors.size(); ++i)
      CHECK(torch::allclose(out.state.tensors[i].to(torch::kDouble), want.state.tensors[i].to(torch::kDouble), 1e-4,
                            1e-5));
    graph.advance();
  }
  return {graph.replaying(), graph.eager_reason()};
}

}  // namespace

TEST_CASE("acting graph on the CPU: eager, with the reason, and equal to eager stepping", "[agents][acting_graph]") {
  for (const auto& type : rlm::memory::memory_types()) {
    const Compared result = compare_with_eager(type, torch::kCPU);
    INFO("backend " << type);
    CHECK_FALSE(result.replaying);
    if (type == "shm") {
      CHECK(result.reason == "the memory draws random numbers when acting, which a graph would replay unchanged");
    } else {
      CHECK(result.reason == "the model is not on a CUDA device");
    }
  }
}

TEST_CASE("acting graph on CUDA: GRU and FFM replay, SHM stays eager, all equal eager",
          "[agents][acting_graph][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  const bool tf32 = at::globalContext().allowTF32CuDNN();
  at::globalContext().setAllowTF32CuDNN(false);  // this test checks our code: full float32 in cuDNN's GRU
  for (const auto& type : rlm::memory::memory_types()) {
    const Compared result = compare_with_eager(type, torch::kCUDA);
    INFO("backend " << type << ": " << (result.replaying ? "replays" : "eager: " + result.reason));
    if (type == "gru" || type == "ffm") CHECK(result.replaying);
    if (type == "shm") CHECK_FALSE(result.replaying);
    WARN("acting graph, " << type << ": " << (result.replaying ? "replays" : "eager (" + result.reason + ")"));
  }
  at::globalContext().setAllowTF32CuDNN(tf32);
}
