// FFM backend: Fast and Forgetful Memory (Morad et al., NeurIPS 2023; research/ffm.md §1, models_algos.md §2.1–2.3),
// the POPGym variant (proroklab/ffm models/ffm_outer.py + OuterLaplaceAggregation):
//   pre(x) = [v | thru | gate] (Linear D -> 2m + 2d), in_gate, out_gate = sigmoid(gate) split [m | d]
//   x̃_t = v_t ⊙ in_gate_t                                               [m]
//   S_t = γ ⊙ S_{t-1} + x̃_t 1_cᵀ,  γ_ij = exp(clamp(a_i) + i·b_j)        [m, c] complex (S_{-1} = carried state)
//   z_t = mix(view_as_real(S_t) flattened (m, c, re/im))                  Linear 2mc -> d
//   y_t = LN(z_t) ⊙ out_gate_t + thru_t ⊙ (1 − out_gate_t)               LN without affine, eps 1e-5
// The recurrence runs through rlm::scan::linear_scan (one call per forward, T = 1 or a whole sequence), with episode
// starts resetting S_{t-1} to the zero initial state; this replaces the reference code's closed-form cumsum
// (ffm.md §1.3, models_algos.md §2.2 [R]), which has no reset input and needs float64 and max_len chunking.
#pragma once
#include "memory/memory.hpp"

namespace rlm::memory {

/// How a and b (α = −a, ω = b) start (ffm.md §1.4, §5.1, §5.17).
enum class FfmInit {
  kCode,  ///< reference code (default): a = linspace(−limit + ε, max(min(−1e-6, ln β / t_e), ·), m), periods linspace
  kPaper,    ///< paper App. B eq. 31/33: j = 1..m (one endpoint excluded), fast limit ln(DBL_MAX)/t_e − ε
  kPeriods,  ///< Fig. 6 "informed" init [I]: a = linspace(ln β / min_period, ln β / max_period, m), periods linspace
};

/// Order of the 2mc real features fed to mix (ffm.md §1.2 step 5, §5.3).
enum class FfmFlatten {
  kInterleaved,   ///< code (default): index (i·c + j)·2 + {0: Re, 1: Im}, torch.view_as_real order
  kConcatenated,  ///< paper Flatten(Re[S] ‖ Im[S]) with ℓ3: R^{m×2c}: index i·2c + j (Re) and i·2c + c + j (Im)
};

/// Shape of the decay γ (ffm.md §1.3, §5.16).
enum class FfmDecayShape {
  kOuter,     ///< FFM (default): γ_ij = exp(a_i + i·b_j), a [m], b [c]
  kHadamard,  ///< FFM-HP ablation [I]: a, b [m, c], initialised by broadcasting the outer init
};

struct FfmOptions {
  int64_t memory_size = 32;       ///< m, trace (decay) rows: ffm.md §1.1, §1.5 (POPGym m = 32)
  int64_t context_size = 4;       ///< c, complex contexts per row: §1.5 (RayFFM context_size 8 reals = 4 complex)
  int64_t output_size = 256;      ///< d, cell output: §1.5, §5.7 (POPGym 128 -> 256; POMDP-B d = h)
  double min_period = 1.0;        ///< shortest initial period of ω: §1.4 (min_period)
  double max_period = 1024.0;     ///< t_e, longest initial period / 1% memory horizon: §1.4, §1.5 (128 for POMDP-B)
  double forgotten_at = 0.01;     ///< β, fraction kept after t_e steps: §1.4 (forgotten_at)
  int64_t max_len = 1024;         ///< L in the clamp limit ln(DBL_MAX)/L − ε = 0.683147: §1.3, §1.4, §5.4
  double fudge = 0.01;            ///< ε of the limit and of a_low: §1.4 (fudge_factor)
  FfmInit init = FfmInit::kCode;  ///< α/ω init: §5.1 decision "follow the code"; §5.17 informed init
  bool conjugate_frequency = false;  ///< §5.2: false = code's exp(+i·b·t); true = paper's exp(−i·ω·t)
  FfmFlatten flatten = FfmFlatten::kInterleaved;  ///< §5.3: interleaved (code) or Re‖Im (paper)
  bool clamp_writeback = false;   ///< §5.5: false = POPGym's functional clamp; true = standalone's a.data = clamp(a)
  bool double_precision = false;  ///< §5.6: scan in complex128 (code's batched path) instead of complex64
  FfmDecayShape decay_shape = FfmDecayShape::kOuter;  ///< §5.16: outer-product γ (FFM) or per-element (FFM-HP)
  bool input_gate = true;                             ///< §1.2 ablation: false gives x̃ = v
  bool output_gate = true;                            ///< §1.2 ablation: false gives y = LN(z) + thru
  bool oscillate = true;        ///< models_algos.md §2.2, §7.4: false fills b with 1e-6 (and freezes it)
  bool learn_oscillate = true;  ///< models_algos.md §7.4 (OuterLaplaceAggregation): false detaches b
  bool decay = true;            ///< models_algos.md §2.2, §7.4: false fills a with 0 (and freezes it)
  bool learn_decay = true;      ///< models_algos.md §7.4 (OuterLaplaceAggregation): false detaches a
};

class Ffm : public Memory {
 public:
  Ffm(int64_t input_size, const FfmOptions& options = {});
  int64_t output_size() const override { return options_.output_size; }
  /// One complex64 tensor [B, m, c] of zeros (ffm.md §1.1, §1.6).
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;

  /// γ as used by forward: complex [m, c] (complex128 when double_precision, else complex64), after the clamp.
  torch::Tensor decay_gate();
  /// The bound on −a: ln(DBL_MAX)/max_len − fudge (0.683147 for the defaults).
  double limit() const { return limit_; }
  const FfmOptions& options() const { return options_; }

  torch::nn::Linear pre{nullptr};  ///< D -> 2m + 2d, output split [v: m | thru: d | gate: m + d]
  torch::Tensor a;                 ///< [m] (Hadamard: [m, c]), float32, stores −α
  torch::Tensor b;                 ///< [c] (Hadamard: [m, c]), float32, stores ω
  torch::nn::Linear mix{nullptr};  ///< 2mc -> d

 private:
  FfmOptions options_;
  double limit_;
};

}  // namespace rlm::memory
