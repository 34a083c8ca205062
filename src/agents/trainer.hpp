// The one interface `rlm train`, `eval`, `bench` and `--resume` use, whatever algo.type says: PPO (ppo.hpp) or the
// recurrent off-policy trainers SAC, SAC-Discrete and TD3 (off_policy.hpp), each a row of trainer_rows().
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agents/acting.hpp"
#include "agents/action_distribution.hpp"
#include "agents/experiment_config.hpp"
#include "agents/image_encoder.hpp"

namespace rlm::agents {

struct TrainSummary {
  int64_t iterations = 0;
  int64_t env_steps = 0;
  double last_return_mean = 0.0;  ///< mean episode return of the last iteration
  double rollout_seconds = 0.0;   ///< time spent acting in the envs in this call of train()
  double update_seconds = 0.0;    ///< time spent in updates (batching, losses, optimiser steps) in this call
  bool interrupted = false;       ///< train() stopped early because stop_requested() turned true
};

/// What resume() loaded, and the newer checkpoints it had to skip (each with the reason).
struct ResumeReport {
  std::filesystem::path checkpoint;
  std::vector<std::pair<std::filesystem::path, std::string>> skipped;
};

class Trainer {
 public:
  virtual ~Trainer() = default;
  /// Restores the newest usable checkpoint of the run folder (falling back to older ones; CheckpointError if none).
  virtual ResumeReport resume() = 0;
  /// Trains until algo.total_steps env steps, or until `stop_requested` returns true (checked at every env step and
  /// update); either way the run folder then holds a checkpoint a resume continues from exactly.
  virtual TrainSummary train(const std::function<bool()>& stop_requested = {}) = 0;
};

/// A trainer's acting network for evaluation: the module a checkpoint loads into, and a maker of policies acting
/// with it (called once its parameters are loaded).
struct PolicyModel {
  std::shared_ptr<torch::nn::Module> module;
  std::function<std::unique_ptr<ActingPolicy>()> make;
};

/// One trainer type: how to build it and its policy for evaluation. agents/trainer.cpp holds the rows, in the order
/// of trainer_schemas() (agents/trainer_schema.cpp, which says which config sections each type reads).
class OffPolicyAlgorithm;
struct TrainerRow {
  std::string_view type;
  std::unique_ptr<Trainer> (*make)(const Config& config, std::filesystem::path run_dir);
  PolicyModel (*policy)(const Config& config, const ObservationLayout& obs, const ActionSpec& spec,
                        const torch::Device& device);
  /// An off-policy type's losses and acting (agents/off_policy/algorithm.hpp); null for other trainers.
  std::unique_ptr<OffPolicyAlgorithm> (*off_policy)(const Config& config) = nullptr;
};
const std::vector<TrainerRow>& trainer_rows();
/// The row of `type`; ConfigValueError on algo.type when no trainer has it.
const TrainerRow& trainer_row(const std::string& type);

/// The trainer algo.type names, with envs, networks and optimisers built (values only it can judge are thrown as
/// ConfigValueError naming their key).
std::unique_ptr<Trainer> make_trainer(const Config& config, std::filesystem::path run_dir);

/// A run's policy for evaluation, loaded from `checkpoint` (or, when empty, from the newest valid checkpoint of
/// run_dir, reporting skipped ones through on_skip). Returns the policy and the checkpoint used.
struct LoadedPolicy {
  std::unique_ptr<ActingPolicy> policy;
  std::filesystem::path checkpoint;
};
LoadedPolicy load_policy(const Config& config, const envs::VecEnv& envs, const std::filesystem::path& run_dir,
                         const std::filesystem::path& checkpoint, const torch::Device& device,
                         const std::function<void(const std::filesystem::path&, const std::string&)>& on_skip);

/// Gives every memory backend inside `root` its own CPU generator, seeded from `seed` and the backend's position in
/// the module tree, for its random draws (SHM's θ rows, the spiking cell's thresholds). Trainers call it with a seed
/// derived from (experiment seed, kMemoryStream, phase, counter) wherever they re-derive their other streams, so the
/// draws are part of the run's seeded streams and a resume repeats them. `on_device`: a backend on a GPU draws there
/// (Memory::set_generator; experiment.memory_draws_on_device).
void seed_memory_streams(torch::nn::Module& root, uint64_t seed, bool on_device = false);

/// The torch device a config asks for (experiment.device: auto picks CUDA when a GPU is present).
torch::Device resolve_device(const std::string& device);

/// Applies experiment.torch_threads (0 = this process's share of the CPUs, core/cpu_share.hpp).
void set_torch_threads(int threads);
/// experiment.cpu_matmul for the whole process (nn::set_onednn_bf16); bf16 on a CPU without native bf16 is refused.
void set_cpu_matmul(const std::string& precision);

}  // namespace rlm::agents
