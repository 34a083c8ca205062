#include "agents/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "agents/actor_critic.hpp"
#include "agents/checkpoint.hpp"
#include "agents/off_policy.hpp"
#include "agents/ppo.hpp"
#include "core/cpu_isa.hpp"
#include "core/error.hpp"
#include "core/seed.hpp"
#include "memory/memory.hpp"
#include "nn/linear.hpp"

namespace rlm::agents {
namespace fs = std::filesystem;
namespace {

/// PPO's ActorCritic acting: logits from the model stepped with T = 1, sampled or the most likely action.
class ActorCriticPolicy : public ActingPolicy {
 public:
  ActorCriticPolicy(ActorCritic model, ActionSpec spec, torch::Device device)
      : model_(std::move(model)), spec_(std::move(spec)), device_(device) {}
  void begin(int64_t num_envs) override { state_ = model_->initial_state(num_envs, device_); }
  torch::Tensor act(const torch::Tensor& obs, const torch::Tensor&, const torch::Tensor&, const torch::Tensor& starts,
                    bool deterministic, const torch::Generator& generator) override {
    auto out = model_->forward(obs.unsqueeze(0).to(device_), state_, starts.unsqueeze(0).to(device_));
    state_ = out.state;
    ActionDistribution dist(spec_, out.logits[0].to(torch::kCPU));
    return deterministic ? dist.mode() : dist.sample(generator);
  }

 private:
  ActorCritic model_;
  ActionSpec spec_;
  torch::Device device_;
  memory::MemoryState state_;
};

}  // namespace

std::unique_ptr<Trainer> make_trainer(const Config& config, fs::path run_dir) {
  if (config.algo.type == "ppo") return std::make_unique<PpoTrainer>(config, std::move(run_dir));
  return std::make_unique<OffPolicyTrainer>(config, std::move(run_dir));
}

LoadedPolicy load_policy(const Config& config, const envs::VecEnv& envs, const fs::path& run_dir,
                         const fs::path& checkpoint, const torch::Device& device,
                         const std::function<void(const fs::path&, const std::string&)>& on_skip) {
  const auto spec = ActionSpec::from_space(envs.action_space(), config.env.id);
  std::shared_ptr<torch::nn::Module> module;
  std::function<std::unique_ptr<ActingPolicy>()> make;
  if (config.algo.type == "ppo") {
    ActorCritic model(envs.obs_size(), spec.num_logits(), config.model);
    module = model.ptr();
    make = [=] { return std::make_unique<ActorCriticPolicy>(model, spec, device); };
  } else {
    OffPolicyAgent agent(envs.obs_size(), spec, config);
    module = agent.ptr();
    make = [=] { return std::make_unique<OffPolicyActingPolicy>(agent, config, device); };
  }
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
  seed_memory_streams(*module, derive_seed(static_cast<uint64_t>(config.experiment.seed), {kMemoryStream, 3}));
  loaded.policy = make();
  return loaded;
}

void seed_memory_streams(torch::nn::Module& root, uint64_t seed) {
  uint64_t position = 0;
  for (const auto& module : root.modules()) {
    if (auto* memory = dynamic_cast<memory::Memory*>(module.get())) {
      memory->set_generator(at::detail::createCPUGenerator(derive_seed(seed, {position})));
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

void set_torch_threads(int threads) {
  torch::set_num_threads(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

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
