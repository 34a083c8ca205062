#include "memory/memory.hpp"

#include <ATen/detail/CUDAHooksInterface.h>

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

void Memory::set_generator(torch::Generator generator, bool on_device) {
  generator_ = std::move(generator);
  draws_on_device_ = on_device;
  device_generator_.reset();
}

std::optional<torch::Generator> Memory::device_generator(const torch::Device& device) const {
  if (!generator_ || !draws_on_device_ || !device.is_cuda()) return std::nullopt;
  // A device without an index is the current one: the generator made for it stays (its stream goes on).
  if (!device_generator_ || (device.has_index() && device_generator_->device() != device)) {
    const c10::DeviceIndex index = device.has_index() ? device.index() : c10::DeviceIndex(-1);
    device_generator_ = at::detail::getCUDAHooks().getNewGenerator(index);
    device_generator_->set_current_seed(generator_->current_seed());
  }
  return device_generator_;
}

torch::Tensor Memory::draw_uniform(at::IntArrayRef sizes, const torch::TensorOptions& options) const {
  ++draws_;
  if (!generator_) return torch::rand(sizes, options);
  if (const auto on_device = device_generator(options.device())) return torch::rand(sizes, *on_device, options);
  return torch::rand(sizes, *generator_, options.device(torch::kCPU)).to(options.device());
}

torch::Tensor Memory::draw_normal(at::IntArrayRef sizes, const torch::TensorOptions& options) const {
  ++draws_;
  if (!generator_) return torch::randn(sizes, options);
  if (const auto on_device = device_generator(options.device())) return torch::randn(sizes, *on_device, options);
  return torch::randn(sizes, *generator_, options.device(torch::kCPU)).to(options.device());
}

torch::Tensor Memory::draw_index(int64_t high, at::IntArrayRef sizes, const torch::Device& device) const {
  ++draws_;
  const auto options = torch::TensorOptions().dtype(torch::kLong);
  if (!generator_) return torch::randint(high, sizes, options.device(device));
  if (const auto on_device = device_generator(device))
    return torch::randint(high, sizes, *on_device, options.device(device));
  return torch::randint(high, sizes, *generator_, options).to(device);
}

}  // namespace rlm::memory
