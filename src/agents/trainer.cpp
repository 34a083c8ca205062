#include "agents/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "agents/checkpoint.hpp"
#include "agents/off_policy.hpp"
#include "agents/ppo.hpp"
#include "core/cpu_isa.hpp"
#include "core/cpu_share.hpp"
#include "core/error.hpp"
#include "core/seed.hpp"
#include "memory/memory.hpp"
#include "nn/linear.hpp"

namespace rlm::agents {
namespace fs = std::filesystem;
namespace {

template <class T>
std::unique_ptr<Trainer> make(const Config& config, fs::path run_dir) {
  return std::make_unique<T>(config, std::move(run_dir));
}

}  // namespace

const TrainerRow& trainer_row(const std::string& type) {
  for (const TrainerRow& row : trainer_rows()) {
    if (row.type == type) return row;
  }
  throw ConfigValueError("algo.type", fmt::format("algo.type = '{}' names no trainer", type));
}

const std::vector<TrainerRow>& trainer_rows() {
  static const std::vector<TrainerRow> rows = {
      {"ppo", make<PpoTrainer>, ppo_policy_model},
      {"sac", make<OffPolicyTrainer>, off_policy_policy_model, make_sac},
      {"sacd", make<OffPolicyTrainer>, off_policy_policy_model, make_sacd},
      {"td3", make<OffPolicyTrainer>, off_policy_policy_model, make_td3},
  };
  return rows;
}

std::unique_ptr<Trainer> make_trainer(const Config& config, fs::path run_dir) {
  return trainer_row(config.algo.type).make(config, std::move(run_dir));
}

LoadedPolicy load_policy(const Config& config, const envs::VecEnv& envs, const fs::path& run_dir,
                         const fs::path& checkpoint, const torch::Device& device,
                         const std::function<void(const fs::path&, const std::string&)>& on_skip) {
  const auto spec = ActionSpec::from_space(envs.action_space(), config.env.id);
  // The layout the trainer built its network for: an image env's pixels go through model.cnn's encoder.
  const auto obs = observation_layout(envs, config.model, config.env.markovian == "partial");
  const PolicyModel model = trainer_row(config.algo.type).policy(config, obs, spec, device);
  const std::shared_ptr<torch::nn::Module>& module = model.module;
  // An explicit checkpoint is evaluated or fails (exit 3); by default the newest valid one, as --resume takes it.
  LoadedPolicy loaded;
  if (!checkpoint.empty()) {
    load_checkpoint(checkpoint, *module, NamedOptimizers{});
    loaded.checkpoint = checkpoint;
  } else {
    loaded.checkpoint = load_newest_valid_checkpoint(run_dir, *module, NamedOptimizers{}, on_skip).path;
  }
  module->to(device);
  module->eval();
  seed_memory_streams(*module, derive_seed(static_cast<uint64_t>(config.experiment.seed), {kMemoryStream, 3}),
                      config.experiment.memory_draws_on_device);
  loaded.policy = model.make();
  return loaded;
}

void seed_memory_streams(torch::nn::Module& root, uint64_t seed, bool on_device) {
  uint64_t position = 0;
  for (const auto& module : root.modules()) {
    if (auto* memory = dynamic_cast<memory::Memory*>(module.get())) {
      memory->set_generator(at::detail::createCPUGenerator(derive_seed(seed, {position})), on_device);
    }
    ++position;
  }
}

torch::Device resolve_device(const std::string& device) {
  if (device == "cpu") return torch::kCPU;
  if (device == "cuda") {
    if (!torch::cuda::is_available())
      throw ConfigValueError("experiment.device", "experiment.device = 'cuda' but no CUDA GPU is available");
    return torch::kCUDA;
  }
  return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

void set_torch_threads(int threads) { torch::set_num_threads(threads > 0 ? threads : cpu_share()); }

void set_cpu_matmul(const std::string& precision) {
  const bool bf16 = precision == "bf16";
  if (bf16 && !nn::cpu_has_native_bf16())
    throw ConfigValueError("experiment.cpu_matmul",
                           fmt::format("experiment.cpu_matmul = 'bf16' needs a CPU with AVX512-BF16 or AMX-BF16, and "
                                       "this one has neither{} (its bf16 products would be slower than fp32): use fp32",
                                       max_cpu_isa() < CpuIsa::avx512 ? " that RLM_MAX_CPU_ISA leaves it" : ""));
  nn::set_onednn_bf16(bf16);
}

}  // namespace rlm::agents
