#include "memory/memory.hpp"

namespace rlm::memory {

MemoryState select_batch(const MemoryState& state, const torch::Tensor& index) {
  MemoryState out;
  out.tensors.reserve(state.tensors.size());
  for (const auto& t : state.tensors) out.tensors.push_back(t.index_select(0, index));
  return out;
}

MemoryState detach(const MemoryState& state) {
  MemoryState out;
  out.tensors.reserve(state.tensors.size());
  for (const auto& t : state.tensors) out.tensors.push_back(t.detach());
  return out;
}

torch::Tensor Memory::draw_uniform(at::IntArrayRef sizes, const torch::TensorOptions& options) const {
  ++draws_;
  if (!generator_) return torch::rand(sizes, options);
  return torch::rand(sizes, *generator_, options.device(torch::kCPU)).to(options.device());
}

torch::Tensor Memory::draw_normal(at::IntArrayRef sizes, const torch::TensorOptions& options) const {
  ++draws_;
  if (!generator_) return torch::randn(sizes, options);
  return torch::randn(sizes, *generator_, options.device(torch::kCPU)).to(options.device());
}

torch::Tensor Memory::draw_index(int64_t high, at::IntArrayRef sizes, const torch::Device& device) const {
  ++draws_;
  const auto options = torch::TensorOptions().dtype(torch::kLong);
  if (!generator_) return torch::randint(high, sizes, options.device(device));
  return torch::randint(high, sizes, *generator_, options).to(device);
}

}  // namespace rlm::memory
