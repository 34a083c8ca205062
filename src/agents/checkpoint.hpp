// Trainer checkpoints: model, optimizer, torch's RNG state and the trainer's counters in one file, written
// atomically inside a checksummed container (core/checkpoint_file.hpp), so a crash mid-write never leaves a
// half-written checkpoint and a truncated or corrupt file gives a clear CheckpointError instead of a crash.
// Loading checks the whole file against the model (every tensor's name and shape, every value finite) before it
// touches the model, so a rejected checkpoint leaves the model as it was and an older one can be tried instead.
#pragma once
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace rlm::agents {

/// A trainer's optimisers by archive name (PPO: {"optimizer"}; off-policy: critic, actor, alpha).
using NamedOptimizers = std::vector<std::pair<std::string, torch::optim::Optimizer*>>;
/// Opaque byte strings stored beside the model (the replay buffer), by name.
using CheckpointBlobs = std::map<std::string, std::string>;

/// The bytes of a checkpoint (the payload write_checkpoint_file wraps): serialising is separate from writing so a
/// trainer can keep the state an iteration started from and write it only if it is stopped mid-iteration.
std::string checkpoint_bytes(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                             const nlohmann::json& trainer_state);
/// The general form: several optimisers and byte blobs. Torch's CPU generator and, when CUDA is available, every
/// CUDA device's generator are saved too.
std::string checkpoint_bytes(torch::nn::Module& model, const NamedOptimizers& optimizers,
                             const nlohmann::json& trainer_state, const CheckpointBlobs& blobs = {});
/// Writes checkpoint_bytes(...) to `path` atomically (creating its folder).
void write_checkpoint(const std::filesystem::path& path, const std::string& bytes);
void save_checkpoint(const std::filesystem::path& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const nlohmann::json& trainer_state);

/// The layout of the trainer state the trainers write (its "format" key) and load_checkpoint reads: 2 since PPO's
/// options moved into algo.ppo and the off-policy statistics are named. A checkpoint of another format is refused,
/// never read with defaults filled in.
inline constexpr int kCheckpointFormat = 2;

/// Restores model and optimizer (and torch's CPU generator) in place; returns the trainer state. Throws
/// CheckpointError naming the first problem (unreadable file, another checkpoint format, a missing/extra/misshapen
/// tensor, a non-finite value) before anything is changed.
nlohmann::json load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                               torch::optim::Optimizer* optimizer);
/// The general form: restores every optimiser named (none for evaluation) and, when `blobs` is given, fills it with
/// every blob the checkpoint holds.
nlohmann::json load_checkpoint(const std::filesystem::path& path, torch::nn::Module& model,
                               const NamedOptimizers& optimizers, CheckpointBlobs* blobs = nullptr);

/// run_dir/checkpoints/ckpt_<iteration>.rlmckpt
std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, int64_t iteration);
/// The newest checkpoint of a run, if any.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& run_dir);
/// Every checkpoint of a run, newest first.
std::vector<std::filesystem::path> checkpoints_newest_first(const std::filesystem::path& run_dir);
/// Deletes all but the newest `keep` checkpoints.
void prune_checkpoints(const std::filesystem::path& run_dir, int keep);
/// Deletes the temp files of atomic writes that a killed process left in run_dir and its checkpoints folder
/// (".<name>.tmp.<pid>.<n>"). Call only while holding the run folder's lock: another writer's are then impossible.
/// Returns how many were removed.
int remove_interrupted_writes(const std::filesystem::path& run_dir);

/// Loads the newest checkpoint that passes load_checkpoint, trying older ones when a newer one is rejected;
/// `on_skip(path, reason)` hears about each skipped file. Throws CheckpointError when none is usable.
struct LoadedCheckpoint {
  std::filesystem::path path;
  nlohmann::json trainer_state;
};
LoadedCheckpoint load_newest_valid_checkpoint(
    const std::filesystem::path& run_dir, torch::nn::Module& model, torch::optim::Optimizer* optimizer,
    const std::function<void(const std::filesystem::path&, const std::string&)>& on_skip);
LoadedCheckpoint load_newest_valid_checkpoint(
    const std::filesystem::path& run_dir, torch::nn::Module& model, const NamedOptimizers& optimizers,
    const std::function<void(const std::filesystem::path&, const std::string&)>& on_skip,
    CheckpointBlobs* blobs = nullptr);

/// Reads a loaded checkpoint's trainer state through `restore`. A field that is missing or of the wrong type (a
/// checkpoint written by other code under the same format number) becomes a CheckpointError naming the checkpoint and
/// the field: one line and exit 3, never a bare JSON exception.
void restore_trainer_state(const LoadedCheckpoint& loaded, const std::function<void(const nlohmann::json&)>& restore);

}  // namespace rlm::agents
