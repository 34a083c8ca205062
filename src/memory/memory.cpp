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

}  // namespace rlm::memory
