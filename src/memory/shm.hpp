// SHM backend: Stable Hadamard Memory (SHM paper §3.3, Eq. 7, 8, 13), the cell of the official code
// (thaihungle/SHM@651f9e2:popgym/baselines/ray_models/ray_shm.py, pomdp-baselines/torchkit/shm.py) with every
// paper/code disagreement as an option (docs/models/shm.md). Memory M ∈ R^{H×H} per batch entry, M_0 = 0:
//   x̃ = LayerNorm(x); k, q = relu(W x̃) / (1e-5 + Σ relu(W x̃)); v = W_v x̃; vc = W_c x̃; η = σ(w_η·x̃)
//   M_t = (1 + tanh(θ_t ⊗ vc_t)) ⊙ M_{t-1} + η_t v_t ⊗ k_t;   y_t = M_t q_t (+ W_s x̃ + b_s);   out = W_o y_t + b_o
// The recurrence runs on the fused op scan::shm_scan (no [T, B, H, H] tensor) for the rank-1 calibrations; the
// ablations fixed_c and random_c (full H×H calibration) use a plain loop that materialises C.
#pragma once
#include <string>

#include "memory/memory.hpp"
#include "memory/shm_config.hpp"
#include "nn/linear.hpp"

namespace rlm::memory {

/// What the backend reads: the YAML options (ShmConfig, memory/shm_config.hpp: the calibrations of SHM paper §4.4,
/// θ sampling, state clamp and shortcut, docs/models/shm.md) plus H.
struct ShmOptions : ShmConfig {
  int64_t memory_size = 128;  ///< H (SHM paper §4.4, Table 4: 128 for POPGym, 24 for meta-RL / credit assignment)
};

class Shm : public Memory {
 public:
  Shm(int64_t input_size, const ShmOptions& options);
  int64_t output_size() const override { return options_.output_size; }
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;
  /// Everything but the output Linear `out` (H -> output_size, 1024 in the POPGym code).
  AffineOutput forward_affine(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;
  const ShmOptions& options() const { return options_; }

 private:
  torch::Tensor draw_theta(const torch::Tensor& x_norm);  // θ_t: [T, B, H]
  MemoryOutput forward_full_calibration(const torch::Tensor& x_norm, const torch::Tensor& k, const torch::Tensor& q,
                                        const torch::Tensor& v, const torch::Tensor& eta, const MemoryState& state,
                                        const torch::Tensor& starts);

  ShmOptions options_;
  torch::nn::LayerNorm norm_{nullptr};
  rlm::nn::Linear projections_{nullptr};  // k, q, v, vc (H each) and η (1) in one matmul; no bias
  torch::Tensor theta_table_;             // [L, H] (random_theta, fixed_theta with L = 1)
  rlm::nn::Linear theta_net_{nullptr};    // neural_theta
  torch::Tensor fixed_c_;                 // [H, H] (fixed_c)
  rlm::nn::Linear shortcut_{nullptr};
  rlm::nn::Linear out_{nullptr};
};

}  // namespace rlm::memory
