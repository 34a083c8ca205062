// GRU backend: POPGym's baseline memory (proroklab/popgym@410d5aa:popgym/baselines/ray_models/ray_gru.py):
// one nn.GRU layer with PyTorch's default initialisation and a zero initial state.
// On the CPU in float32 the layer's weights are run by our own step loop with torch's GRU equations and gate order
// (faster at every size, gru.cpp says why); elsewhere by torch's fused GRU (cuDNN on CUDA).
#pragma once
#include "memory/memory.hpp"

namespace rlm::memory {

class Gru : public Memory {
 public:
  Gru(int64_t input_size, int64_t hidden_size);
  int64_t output_size() const override { return hidden_size_; }
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;

 private:
  /// keep: [T, B, 1], 0 where an entry's state resets before step t; resets: CPU bool [T], whether any entry does.
  MemoryOutput forward_torch(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& keep,
                             const torch::Tensor& resets);
  MemoryOutput forward_steps(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& keep,
                             const torch::Tensor& resets);

  int64_t hidden_size_;
  torch::nn::GRU gru_{nullptr};
};

}  // namespace rlm::memory
