// The registry and the config agree: every model.memory.type a config accepts builds a backend, and each backend
// honours the Memory contract's shapes (y [T, B, output_size], batch-first state, select_batch/detach round trip).
#include <torch/torch.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "agents/experiment_config.hpp"
#include "memory/registry.hpp"

TEST_CASE("memory registry: config choices and registered backends are the same list", "[memory][registry]") {
  std::vector<std::string> choices(rlm::kMemoryTypes.values.begin(), rlm::kMemoryTypes.values.end());
  auto registered = rlm::memory::memory_types();
  std::sort(choices.begin(), choices.end());
  std::sort(registered.begin(), registered.end());
  CHECK(choices == registered);
}

TEST_CASE("memory registry: every backend honours the Memory contract at small sizes", "[memory][registry]") {
  torch::manual_seed(0);
  for (const auto& type : rlm::memory::memory_types()) {
    INFO("backend " << type);
    rlm::MemoryConfig config;
    config.type = type;
    config.hidden_size = 16;
    config.shm.output_size = 24;
    config.ffm.memory_size = 4;
    config.kf.state_size = 8;
    config.stm.item_size = 8;
    config.stm.num_slots = 2;
    config.stm.rel_size = 8;
    auto memory = rlm::memory::make_memory(config, 12);
    const int64_t steps = 5, batch = 3;
    auto state = memory->initial_state(batch, torch::kCPU);
    for (const auto& t : state.tensors) CHECK(t.size(0) == batch);
    auto starts = torch::zeros({steps, batch}, torch::kBool);
    starts[0].fill_(true);
    auto out = memory->forward(torch::randn({steps, batch, 12}), state, starts);
    CHECK(out.y.sizes() == torch::IntArrayRef({steps, batch, memory->output_size()}));
    REQUIRE(out.state.tensors.size() == state.tensors.size());
    for (size_t i = 0; i < state.tensors.size(); ++i) CHECK(out.state.tensors[i].sizes() == state.tensors[i].sizes());
    // A state selected for some entries feeds a forward of that batch size.
    auto picked = rlm::memory::select_batch(rlm::memory::detach(out.state), torch::tensor({2, 0}));
    auto next = memory->forward(torch::randn({1, 2, 12}), picked, torch::zeros({1, 2}, torch::kBool));
    CHECK(next.y.sizes() == torch::IntArrayRef({1, 2, memory->output_size()}));
  }
}

TEST_CASE("memory registry: every backend on CUDA equals the same weights on the CPU", "[memory][registry][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  // cuDNN's GRU computes in TF32 by default on Ampere and later (10-bit mantissa): this test checks our code, so full
  // float32 precision; the setting is restored for the tests that follow.
  const bool tf32 = at::globalContext().allowTF32CuDNN();
  at::globalContext().setAllowTF32CuDNN(false);
  for (const auto& type : rlm::memory::memory_types()) {
    INFO("backend " << type);
    torch::manual_seed(1);
    rlm::MemoryConfig config;
    config.type = type;
    config.hidden_size = 32;
    config.shm.output_size = 24;
    config.ffm.memory_size = 8;
    config.kf.state_size = 16;
    config.stm.item_size = 8;
    config.stm.num_slots = 2;
    config.stm.rel_size = 8;
    auto cpu = rlm::memory::make_memory(config, 12);
    torch::manual_seed(1);
    auto gpu = rlm::memory::make_memory(config, 12);  // same seed, same weights
    gpu->to(torch::kCUDA);
    // Training mode (cuDNN's RNN backward needs it), with the random draws of training (SHM's θ rows, the spiking
    // cell's threshold) from one CPU stream each, seeded alike: the draws are the same on both devices.
    cpu->set_generator(at::detail::createCPUGenerator(7));
    gpu->set_generator(at::detail::createCPUGenerator(7));
    const int64_t steps = 40, batch = 3;
    auto x = torch::randn({steps, batch, 12});
    auto starts = torch::rand({steps, batch}) < 0.1;
    starts[0].fill_(true);
    auto out_cpu = cpu->forward(x, cpu->initial_state(batch, torch::kCPU), starts);
    auto out_gpu = gpu->forward(x.cuda(), gpu->initial_state(batch, torch::kCUDA), starts.cuda());
    CHECK(torch::allclose(out_gpu.y.cpu(), out_cpu.y, 1e-4, 1e-4));
    out_cpu.y.sum().backward();
    out_gpu.y.sum().backward();
    auto cpu_params = cpu->named_parameters();
    for (const auto& p : gpu->named_parameters()) {
      INFO("parameter " << p.key());
      if (!p.value().grad().defined()) continue;
      CHECK(torch::allclose(p.value().grad().cpu(), cpu_params[p.key()].grad(), 1e-3, 1e-3));
    }
  }
  at::globalContext().setAllowTF32CuDNN(tf32);
}
