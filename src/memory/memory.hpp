// The one contract every memory backend implements (DESIGN.md "Key interfaces"; STYLE.md principle 9).
// Trainers never branch on the backend: rollouts call forward with T = 1, training with whole sequences, and the
// same weights give the same outputs either way (tested for every backend).
#pragma once
#include <torch/torch.h>

#include <vector>

namespace rlm::memory {

/// Recurrent state, opaque to callers. Every tensor is batch-first ([B, ...]) so that trainers can select, store
/// and restore the state of chosen batch entries without knowing the backend.
struct MemoryState {
  std::vector<torch::Tensor> tensors;
};

struct MemoryOutput {
  torch::Tensor y;    ///< [T, B, output_size()]
  MemoryState state;  ///< state after the last step
};

class Memory : public torch::nn::Module {
 public:
  virtual int64_t output_size() const = 0;
  virtual MemoryState initial_state(int64_t batch, const torch::Device& device) const = 0;
  /// x: [T, B, D]; starts: [T, B] bool, true where an episode starts at step t: the state is reset to the initial
  /// state before step t is processed.
  virtual MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) = 0;
};

/// The state of batch entries `index` (int64 [K]) of `state`.
MemoryState select_batch(const MemoryState& state, const torch::Tensor& index);

/// A copy of `state` with no autograd history (rollouts carry states across steps without building a graph).
MemoryState detach(const MemoryState& state);

}  // namespace rlm::memory
