// The one contract every memory backend implements.
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

/// forward's output before the affine layer it ends with: y = read·weightᵀ + bias. A caller that feeds y straight
/// into linear layers can apply their product with `weight` instead and never form y (nn::linear_after_affine): SHM's
/// 1024-wide output between H = 64-128 and the 64-wide layers after it costs 1024·(H + 64) multiply-adds per token, the
/// product H·64. `weight` is undefined where the backend has no such layer (read is then y).
struct AffineOutput {
  torch::Tensor read;          ///< [T, B, in]
  torch::Tensor weight, bias;  ///< [output_size(), in], [output_size()] (bias may be undefined)
  MemoryState state;
};

class Memory : public torch::nn::Module {
 public:
  virtual int64_t output_size() const = 0;
  virtual MemoryState initial_state(int64_t batch, const torch::Device& device) const = 0;
  /// x: [T, B, D]; starts: [T, B] bool, true where an episode starts at step t: the state is reset to the initial
  /// state before step t is processed.
  virtual MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) = 0;
  /// forward with its last affine layer left to the caller (AffineOutput). The default applies none: read = y.
  virtual AffineOutput forward_affine(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
    auto out = forward(x, state, starts);
    return {std::move(out.y), {}, {}, std::move(out.state)};
  }

  /// The random draws of a forward (SHM's θ rows and random calibrations, the spiking cell's training thresholds) come
  /// from `generator` (a CPU generator) from now on, so a trainer can derive them from the run's seeded streams and
  /// reseed them where it needs to; without one they come from torch's global generator. `on_device`: draws for a
  /// CUDA tensor come instead from a generator of that device seeded with `generator`'s seed (Philox: deterministic,
  /// and no host work or copy; drawing the spiking cell's thresholds on the CPU took most of its GPU iteration);
  /// without it they are the CPU run's numbers, copied over.
  void set_generator(torch::Generator generator, bool on_device = false);
  /// How many random draws this backend's forwards have made so far: a caller learns from it whether a forward draws
  /// (agents/acting_graph.hpp cannot capture one that does).
  uint64_t draws() const { return draws_; }

 protected:
  /// U[0, 1) / N(0, 1) / integers in [0, high) of `sizes`, on `options`' device and dtype: from the generator when
  /// one is set (drawn on the CPU, then moved), else from torch's global generator on that device.
  torch::Tensor draw_uniform(at::IntArrayRef sizes, const torch::TensorOptions& options) const;
  torch::Tensor draw_normal(at::IntArrayRef sizes, const torch::TensorOptions& options) const;
  torch::Tensor draw_index(int64_t high, at::IntArrayRef sizes, const torch::Device& device) const;

 private:
  std::optional<torch::Generator> generator_;
  bool draws_on_device_ = false;
  mutable std::optional<torch::Generator> device_generator_;  ///< made at the first draw on a device
  mutable uint64_t draws_ = 0;

  /// The generator for a draw on `device` when draws_on_device_ applies there, else nullopt.
  std::optional<torch::Generator> device_generator(const torch::Device& device) const;
};

/// The state of batch entries `index` (int64 [K]) of `state`.
MemoryState select_batch(const MemoryState& state, const torch::Tensor& index);

/// A copy of `state` with no autograd history (rollouts carry states across steps without building a graph).
MemoryState detach(const MemoryState& state);

}  // namespace rlm::memory
