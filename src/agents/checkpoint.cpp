#include "agents/checkpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

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
  if (!fs::is_directory(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.starts_with(kPrefix) && name.ends_with(kSuffix)) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());  // zero-padded iteration numbers sort by name
  return out;
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

void prune_checkpoints(const fs::path& run_dir, int keep) {
  auto all = list_checkpoints(run_dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i) fs::remove(all[i]);
}

void save_checkpoint(const fs::path& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                     const nlohmann::json& trainer_state) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive model_archive, optimizer_archive;
  model.save(model_archive);
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("trainer_state", c10::IValue(trainer_state.dump()));
  archive.write("torch_cpu_rng", at::detail::getDefaultCPUGenerator().get_state());
  std::string bytes;
  archive.save_to([&bytes](const void* data, size_t size) {
    bytes.append(static_cast<const char*>(data), size);
    return size;
  });
  fs::create_directories(path.parent_path());
  write_checkpoint_file(path, bytes);
}

nlohmann::json load_checkpoint(const fs::path& path, torch::nn::Module& model, torch::optim::Optimizer* optimizer) {
  const std::string bytes = read_checkpoint_file(path);  // throws CheckpointError on missing/truncated/corrupt
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(bytes.data(), bytes.size());
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
    if (optimizer != nullptr) {
      torch::serialize::InputArchive optimizer_archive;
      archive.read("optimizer", optimizer_archive);
      optimizer->load(optimizer_archive);
    }
    torch::Tensor rng_state;
    archive.read("torch_cpu_rng", rng_state);
    auto generator = at::detail::getDefaultCPUGenerator();
    generator.set_state(rng_state);
    c10::IValue state;
    archive.read("trainer_state", state);
    return nlohmann::json::parse(state.toStringRef());
  } catch (const c10::Error& e) {
    throw CheckpointError(fmt::format("checkpoint '{}' does not match this model or is unreadable: {}", path.string(),
                                      e.what_without_backtrace()));
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(fmt::format("checkpoint '{}' has an unreadable trainer state: {}", path.string(), e.what()));
  }
}

}  // namespace rlm::agents
