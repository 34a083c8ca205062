#include "agents/checkpoint.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "agents/global_generator.hpp"
#include "core/atomic_file.hpp"
#include "core/checkpoint_file.hpp"
#include "core/error.hpp"

namespace rlm::agents {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = "ckpt_";
constexpr const char* kSuffix = ".rlmckpt";

std::vector<fs::path> list_checkpoints(const fs::path& run_dir) {
  std::vector<fs::path> out;
  const auto dir = run_dir / "checkpoints";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with(kPrefix) && name.ends_with(kSuffix)) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());  // zero-padded iteration numbers sort by name
  return out;
}

/// {"optimizer", optimizer} (PPO's archive name), or nothing for a null optimizer (evaluation).
NamedOptimizers single(torch::optim::Optimizer* optimizer) {
  if (optimizer == nullptr) return {};
  return {{"optimizer", optimizer}};
}

std::string shape_of(const torch::Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

/// Checks one saved tensor against the model's, without touching the model.
void check_tensor(torch::serialize::InputArchive& archive, const std::string& name, const std::string& path,
                  const torch::Tensor& expected, bool is_buffer) {
  torch::Tensor saved;
  if (!archive.try_read(name, saved, is_buffer)) throw CheckpointError(fmt::format("tensor '{}' is missing", path));
  if (saved.sizes() != expected.sizes()) {
    throw CheckpointError(
        fmt::format("tensor '{}' has shape {}, the model's has {}", path, shape_of(saved), shape_of(expected)));
  }
  if (saved.is_floating_point() || saved.is_complex()) {
    if (!torch::isfinite(saved).all().item<bool>())
      throw CheckpointError(fmt::format("tensor '{}' holds non-finite values (inf or NaN)", path));
  }
}

/// Every parameter, buffer and submodule of `module` is in `archive` with the model's shape, finite, and the archive
/// holds nothing else: so model.load() cannot fail half-way and a checkpoint of another architecture is named as such.
void check_module(torch::serialize::InputArchive& archive, const torch::nn::Module& module, const std::string& prefix) {
  std::set<std::string> known = {"training"};  // TorchScript's own attribute of every archived module
  for (const auto& item : module.named_parameters(/*recurse=*/false)) {
    check_tensor(archive, item.key(), prefix + item.key(), item.value(), false);
    known.insert(item.key());
  }
  for (const auto& item : module.named_buffers(/*recurse=*/false)) {
    check_tensor(archive, item.key(), prefix + item.key(), item.value(), true);
    known.insert(item.key());
  }
  for (const auto& child : module.named_children()) {
    torch::serialize::InputArchive sub;
    if (!archive.try_read(child.key(), sub))
      throw CheckpointError(fmt::format("module '{}' is missing", prefix + child.key()));
    check_module(sub, *child.value(), prefix + child.key() + ".");
    known.insert(child.key());
  }
  for (const std::string& key : archive.keys()) {
    if (!known.count(key)) throw CheckpointError(fmt::format("'{}' is not part of this model", prefix + key));
  }
}

}  // namespace

fs::path checkpoint_path(const fs::path& run_dir, int64_t iteration) {
  return run_dir / "checkpoints" / fmt::format("{}{:08d}{}", kPrefix, iteration, kSuffix);
}

std::optional<fs::path> latest_checkpoint(const fs::path& run_dir) {
  auto all = list_checkpoints(run_dir);
  if (all.empty()) return std::nullopt;
  return all.back();
}

std::vector<fs::path> checkpoints_newest_first(const fs::path& run_dir) {
  auto all = list_checkpoints(run_dir);
  std::reverse(all.begin(), all.end());
  return all;
}

void prune_checkpoints(const fs::path& run_dir, int keep) {
  auto all = list_checkpoints(run_dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i) fs::remove(all[i]);
}

int remove_interrupted_writes(const fs::path& run_dir) {
  return remove_interrupted_atomic_writes(run_dir) + remove_interrupted_atomic_writes(run_dir / "checkpoints");
}

std::string checkpoint_bytes(torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                             const nlohmann::json& trainer_state) {
  return checkpoint_bytes(model, single(&optimizer), trainer_state);
}

std::string checkpoint_bytes(torch::nn::Module& model, const NamedOptimizers& optimizers,
                             const nlohmann::json& trainer_state, const CheckpointBlobs& blobs) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive;
  model.save(model_archive);
  archive.write("model", model_archive);
  for (const auto& [name, optimizer] : optimizers) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write(name, optimizer_archive);
  }
  archive.write("trainer_state", c10::IValue(trainer_state.dump()));
  {
    const std::lock_guard lock(global_generator_mutex());
    archive.write("torch_cpu_rng", at::detail::getDefaultCPUGenerator().get_state());
    if (torch::cuda::is_available()) {
      for (int64_t d = 0; d < static_cast<int64_t>(torch::cuda::device_count()); ++d) {
        const auto generator =
            at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(d)));
        archive.write(fmt::format("torch_cuda_rng_{}", d), generator.get_state());
      }
    }
  }
  for (const auto& [name, bytes] : blobs) {
    auto tensor = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
    std::memcpy(tensor.data_ptr(), bytes.data(), bytes.size());
    archive.write("blob_" + name, tensor, /*is_buffer=*/true);
  }
  std::string bytes;
  archive.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  return bytes;
}

void write_checkpoint(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  write_checkpoint_file(path, bytes);
}

void save_checkpoint(const fs::path& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const nlohmann::json& trainer_state) {
  write_checkpoint(path, checkpoint_bytes(model, optimizer, trainer_state));
}

nlohmann::json load_checkpoint(const fs::path& path, torch::nn::Module& model, torch::optim::Optimizer* optimizer) {
  return load_checkpoint(path, model, single(optimizer));
}

nlohmann::json load_checkpoint(const fs::path& path, torch::nn::Module& model, const NamedOptimizers& optimizers,
                               CheckpointBlobs* blobs) {
  const std::string bytes = read_checkpoint_file(path);  // throws CheckpointError on missing/truncated/corrupt
  const std::string name = path.string();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(bytes.data(), bytes.size());
    torch::serialize::InputArchive model_archive;
    if (!archive.try_read("model", model_archive)) throw CheckpointError("it holds no model");
    check_module(model_archive, model, "");
    c10::IValue state;
    if (!archive.try_read("trainer_state", state) || !state.isString()) throw CheckpointError("no trainer state");
    auto trainer_state = nlohmann::json::parse(state.toStringRef());
    const int format = trainer_state.is_object() ? trainer_state.value("format", 1) : 1;  // 1: before the key
    if (format != kCheckpointFormat)
      throw CheckpointError(
          fmt::format("it is in checkpoint format {}, and this rlm reads format {} only", format, kCheckpointFormat));
    torch::Tensor rng_state;
    if (!archive.try_read("torch_cpu_rng", rng_state)) throw CheckpointError("no RNG state");
    std::vector<torch::serialize::InputArchive> optimizer_archives(optimizers.size());
    for (size_t i = 0; i < optimizers.size(); ++i) {
      if (!archive.try_read(optimizers[i].first, optimizer_archives[i]))
        throw CheckpointError(fmt::format("no {} state", optimizers[i].first));
    }
    if (blobs != nullptr) {
      blobs->clear();
      for (const std::string& key : archive.keys()) {
        torch::Tensor tensor;
        if (!key.starts_with("blob_") || !archive.try_read(key, tensor, /*is_buffer=*/true)) continue;
        tensor = tensor.contiguous();
        (*blobs)[key.substr(5)] = std::string(static_cast<const char*>(tensor.data_ptr()), tensor.numel());
      }
    }

    // Checked: now change things.
    model.load(model_archive);
    for (size_t i = 0; i < optimizers.size(); ++i) optimizers[i].second->load(optimizer_archives[i]);
    const std::lock_guard lock(global_generator_mutex());
    auto generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(rng_state);
    if (torch::cuda::is_available()) {
      for (int64_t d = 0; d < static_cast<int64_t>(torch::cuda::device_count()); ++d) {
        torch::Tensor cuda_state;
        if (!archive.try_read(fmt::format("torch_cuda_rng_{}", d), cuda_state)) continue;
        auto cuda_generator =
            at::globalContext().defaultGenerator(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(d)));
        cuda_generator.set_state(cuda_state);
      }
    }
    return trainer_state;
  } catch (const CheckpointError& e) {
    throw CheckpointError(fmt::format("checkpoint '{}': {}", name, e.what()));
  } catch (const c10::Error& e) {
    throw CheckpointError(fmt::format("checkpoint '{}' does not match this model or is unreadable: {}", name,
                                      e.what_without_backtrace()));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(fmt::format("checkpoint '{}' has an unreadable trainer state: {}", name, e.what()));
  }
}

void restore_trainer_state(const LoadedCheckpoint& loaded, const std::function<void(const nlohmann::json&)>& restore) {
  try {
    restore(loaded.trainer_state);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(
        fmt::format("checkpoint '{}' has a trainer state this rlm cannot read: {}", loaded.path.string(), e.what()));
  }
}

LoadedCheckpoint load_newest_valid_checkpoint(const fs::path& run_dir, torch::nn::Module& model,
                                              torch::optim::Optimizer* optimizer,
                                              const std::function<void(const fs::path&, const std::string&)>& on_skip) {
  return load_newest_valid_checkpoint(run_dir, model, single(optimizer), on_skip);
}

LoadedCheckpoint load_newest_valid_checkpoint(const fs::path& run_dir, torch::nn::Module& model,
                                              const NamedOptimizers& optimizers,
                                              const std::function<void(const fs::path&, const std::string&)>& on_skip,
                                              CheckpointBlobs* blobs) {
  const auto candidates = checkpoints_newest_first(run_dir);
  if (candidates.empty()) throw CheckpointError(fmt::format("run '{}' has no checkpoint", run_dir.string()));
  std::string last_reason;
  for (const fs::path& path : candidates) {
    try {
      return {path, load_checkpoint(path, model, optimizers, blobs)};
    } catch (const CheckpointError& e) {
      last_reason = e.what();
      if (on_skip) on_skip(path, last_reason);
    }
  }
  throw CheckpointError(fmt::format("run '{}': none of its {} checkpoints is usable (oldest: {})", run_dir.string(),
                                    candidates.size(), last_reason));
}

}  // namespace rlm::agents
