// Where a memory's random draws come from (Memory::set_generator): the seeded CPU stream, or with on_device a
// generator of the tensor's GPU seeded alike. On the CPU the flag changes nothing; on a GPU the draws must be
// deterministic for a seed, differ between seeds, and be counted (Memory::draws(), which agents/acting_graph reads).
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "memory/registry.hpp"

namespace {

std::shared_ptr<rlm::memory::Memory> spiking_cell() {
  torch::manual_seed(2);
  rlm::MemoryConfig config;
  config.type = "spiking";
  config.hidden_size = 32;
  return rlm::memory::make_memory(config, 8);
}

/// One training-mode forward (the spiking cell draws its thresholds) after seeding the draws with `seed`.
torch::Tensor forward(rlm::memory::Memory& memory, uint64_t seed, bool on_device, const torch::Device& device) {
  memory.set_generator(at::detail::createCPUGenerator(seed), on_device);
  torch::manual_seed(3);
  const auto x = torch::randn({6, 2, 8}).to(device);
  auto starts = torch::zeros({6, 2}, torch::kBool);
  starts[0].fill_(true);
  return memory.forward(x, memory.initial_state(2, device), starts.to(device)).y.cpu();
}

}  // namespace

TEST_CASE("memory draws: on_device changes nothing on the CPU, and every draw is counted", "[memory][draws]") {
  auto memory = spiking_cell();
  memory->train();
  const uint64_t before = memory->draws();
  const auto a = forward(*memory, 7, false, torch::kCPU);
  CHECK(memory->draws() == before + 1);  // one threshold tensor per forward (noise_sampling per_step)
  CHECK(torch::equal(forward(*memory, 7, true, torch::kCPU), a));
  CHECK_FALSE(torch::equal(forward(*memory, 8, true, torch::kCPU), a));
  memory->eval();  // acting: the fixed threshold, no draw
  const uint64_t acting = memory->draws();
  forward(*memory, 7, false, torch::kCPU);
  CHECK(memory->draws() == acting);
}

TEST_CASE("memory draws on a GPU: deterministic per seed, different across seeds", "[memory][draws][cuda]") {
  if (!torch::cuda::is_available()) {
    WARN("no CUDA device: skipped (runs in scripts/gpu_check.sh)");
    return;
  }
  auto memory = spiking_cell();
  memory->to(torch::kCUDA);
  memory->train();
  const auto a = forward(*memory, 7, true, torch::kCUDA);
  CHECK(torch::equal(forward(*memory, 7, true, torch::kCUDA), a));
  CHECK_FALSE(torch::equal(forward(*memory, 8, true, torch::kCUDA), a));
  // One seeding, two forwards: the device stream goes on (a generator made afresh per draw would repeat it).
  memory->set_generator(at::detail::createCPUGenerator(7), true);
  torch::manual_seed(3);
  const auto x = torch::randn({6, 2, 8}).cuda();
  auto starts = torch::zeros({6, 2}, torch::kBool);
  starts[0].fill_(true);
  starts = starts.cuda();
  const auto first = memory->forward(x, memory->initial_state(2, torch::kCUDA), starts).y.cpu();
  const auto second = memory->forward(x, memory->initial_state(2, torch::kCUDA), starts).y.cpu();
  CHECK(torch::equal(first, a));
  CHECK_FALSE(torch::equal(second, first));
  // Drawn on the CPU instead: another stream, the CPU run's numbers.
  CHECK_FALSE(torch::equal(forward(*memory, 7, false, torch::kCUDA), a));
}
