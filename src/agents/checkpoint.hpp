// Trainer checkpoints: model, optimizer, torch's RNG state and the trainer's counters in one file, written
// atomically inside a checksummed container (core/checkpoint_file.hpp), so a crash mid-write never leaves a
// half-written checkpoint and a truncated or corrupt file gives a clear CheckpointError instead of a crash.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

namespace rlm::agents {

void save_checkpoint(const std::filesystem::path& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const nlohmann::json& trainer_state);

/// Restores model and optimizer (and torch's CPU generator) in place; returns the trainer state.
nlohmann::json load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                               torch::optim::Optimizer* optimizer);

/// run_dir/checkpoints/ckpt_<iteration>.rlmckpt
std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, int64_t iteration);
/// The newest checkpoint of a run, if any.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& run_dir);
/// Deletes all but the newest `keep` checkpoints.
void prune_checkpoints(const std::filesystem::path& run_dir, int keep);

}  // namespace rlm::agents
