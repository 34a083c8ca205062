// FFM backend: Fast and Forgetful Memory (FFM paper §5, Eq. 11–18; docs/models/ffm.md), the POPGym variant
// (proroklab/ffm@b3f94d2:models/ffm_outer.py with aggregations.py:OuterLaplaceAggregation):
//   pre(x) = [v | thru | gate] (Linear D -> 2m + 2d), in_gate, out_gate = sigmoid(gate) split [m | d]
//   x̃_t = v_t ⊙ in_gate_t                                               [m]
//   S_t = γ ⊙ S_{t-1} + x̃_t 1_cᵀ,  γ_ij = exp(clamp(a_i) + i·b_j)        [m, c] complex (S_{-1} = carried state)
//   z_t = mix(view_as_real(S_t) flattened (m, c, re/im))                  Linear 2mc -> d
//   y_t = LN(z_t) ⊙ out_gate_t + thru_t ⊙ (1 − out_gate_t)               LN without affine, eps 1e-5
// The recurrence runs through rlm::scan::linear_scan (one call per forward, T = 1 or a whole sequence), with episode
// starts resetting S_{t-1} to the zero initial state; this replaces the reference code's closed-form cumsum
// (FFM paper Eq. 13, App. C), which has no reset input and needs float64 and max_len chunking.
#pragma once
#include "memory/ffm_config.hpp"
#include "memory/memory.hpp"
#include "nn/linear.hpp"

namespace rlm::memory {

/// What the backend reads: the YAML options (FfmConfig, memory/ffm_config.hpp) plus the output width and the code's
/// constants of the initialisation and the clamp (aggregations.py), which no config sets.
struct FfmOptions : FfmConfig {
  int64_t output_size = 256;   ///< d, cell output (POPGym 128 -> 256: models/ray_ffm.py; POMDP-B h: FFM paper App. D.3)
  double min_period = 1.0;     ///< shortest initial period of ω (code: min_period)
  double forgotten_at = 0.01;  ///< β, fraction kept after t_e steps (FFM paper App. B)
  int64_t max_len = 1024;      ///< L in the clamp limit ln(DBL_MAX)/L − ε = 0.683147 (code: max_len)
  double fudge = 0.01;         ///< ε of the limit and of a_low (code: fudge_factor)
};

class Ffm : public Memory {
 public:
  Ffm(int64_t input_size, const FfmOptions& options = {});
  int64_t output_size() const override { return options_.output_size; }
  /// One complex64 tensor [B, m, c] of zeros, the code's state at an episode start.
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;

  /// γ as used by forward: complex [m, c] (complex128 when double_precision, else complex64), after the clamp.
  torch::Tensor decay_gate();
  /// The bound on −a: ln(DBL_MAX)/max_len − fudge (0.683147 for the defaults).
  double limit() const { return limit_; }
  const FfmOptions& options() const { return options_; }

  rlm::nn::Linear pre{nullptr};  ///< D -> 2m + 2d, output split [v: m | thru: d | gate: m + d]
  torch::Tensor a;               ///< [m] (Hadamard: [m, c]), float32, stores −α
  torch::Tensor b;               ///< [c] (Hadamard: [m, c]), float32, stores ω
  rlm::nn::Linear mix{nullptr};  ///< 2mc -> d

 private:
  FfmOptions options_;
  double limit_;
};

}  // namespace rlm::memory
