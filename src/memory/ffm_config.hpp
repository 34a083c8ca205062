// The FFM backend's options (YAML section model.memory.ffm), beside the backend (memory/ffm.hpp), which reads this
// struct itself (FfmOptions extends it with the widths): an option is added here and used there, nowhere else.
#pragma once
#include "core/config_schema.hpp"

namespace rlm::memory {

/// How a and b (α = −a, ω = b) start (FFM paper App. B and Fig. 6; docs/models/ffm.md).
enum class FfmInit {
  kCode,  ///< reference code (default): a = linspace(−limit + ε, max(min(−1e-6, ln β / t_e), ·), m), periods linspace
  kPaper,    ///< paper App. B eq. 31/33: j = 1..m (one endpoint excluded), fast limit ln(DBL_MAX)/t_e − ε
  kPeriods,  ///< Fig. 6 "informed" init (ours): a = linspace(ln β / min_period, ln β / max_period, m), periods linspace
};

/// Order of the 2mc real features fed to mix (FFM paper Eq. 17).
enum class FfmFlatten {
  kInterleaved,   ///< code (default): index (i·c + j)·2 + {0: Re, 1: Im}, torch.view_as_real order
  kConcatenated,  ///< paper Flatten(Re[S] ‖ Im[S]) with ℓ3: R^{m×2c}: index i·2c + j (Re) and i·2c + c + j (Im)
};

/// Shape of the decay γ (FFM paper Eq. 12, Table 3).
enum class FfmDecayShape {
  kOuter,     ///< FFM (default): γ_ij = exp(a_i + i·b_j), a [m], b [c]
  kHadamard,  ///< FFM-HP ablation (not released; ours): a, b [m, c], the outer init broadcast
};

}  // namespace rlm::memory

namespace rlm {

/// FFM options (model.memory.ffm; docs/models/ffm.md, memory/ffm.hpp). The output width d is model.memory.hidden_size.
struct FfmConfig {
  /// m, rows of the decaying trace (POPGym: 32).
  int memory_size = 32;
  /// c, complex contexts per row (POPGym: 4).
  int context_size = 4;
  /// Longest initial period / memory horizon t_e (FFM paper App. B; 128 for POMDP-Baselines, App. D.3).
  double max_period = 1024;
  /// α/ω initialisation: code (reference code), paper (FFM paper App. B Eq. 31/33), periods (Fig. 6).
  memory::FfmInit init = memory::FfmInit::kCode;
  /// Frequency sign: false = the code's exp(+iωt), true = the paper's exp(−iωt) (FFM paper Eq. 12).
  bool conjugate_frequency = false;
  /// Order of the real features fed to the mixing Linear: interleaved (code) or concatenated (FFM paper Eq. 17).
  memory::FfmFlatten flatten = memory::FfmFlatten::kInterleaved;
  /// Decay shape: outer (FFM) or hadamard (the FFM-HP ablation of FFM paper Table 3).
  memory::FfmDecayShape decay_shape = memory::FfmDecayShape::kOuter;
  /// Run the scan in complex128 (the reference code's batched path) instead of complex64.
  bool double_precision = false;
  /// Input gate x̃ = v ⊙ σ(ℓ2 x); false is the FFM-NI ablation, x̃ = v (FFM paper Table 3).
  bool input_gate = true;
  /// Output gate; false is the FFM-NO ablation, y = LN(z) + thru (FFM paper Table 3).
  bool output_gate = true;
  /// Oscillating contexts ω; false is FFM-NC: b filled with 1e-6 and frozen, as the code (FFM paper Table 3).
  bool oscillate = true;
  /// Learn ω; false is FFM-FC, ω kept at its init (FFM paper Table 3).
  bool learn_oscillate = true;
  /// Decay α; false is FFM-ND: a filled with 0 (−1e-8 after the clamp) and frozen (FFM paper Table 3).
  bool decay = true;
  /// Learn α; false is FFM-FD, α kept at its init (FFM paper Table 3).
  bool learn_decay = true;
  /// Write the clamp of a back into the parameter every forward, as the standalone cell (SHM's copy) does; false is
  /// the FFM paper's POPGym cell, which clamps only inside the graph (proroklab/ffm@b3f94d2:aggregations.py).
  bool clamp_writeback = false;

  template <class V>
  void visit(V& v) {
    v.field("memory_size", memory_size, in_range(1, kMaxWidth));
    v.field("context_size", context_size, in_range(1, kMaxWidth));
    v.field("max_period", max_period, greater_than(0));
    v.field("init", init,
            named<memory::FfmInit>({{"code", memory::FfmInit::kCode},
                                    {"paper", memory::FfmInit::kPaper},
                                    {"periods", memory::FfmInit::kPeriods}}));
    v.field("conjugate_frequency", conjugate_frequency);
    v.field("flatten", flatten,
            named<memory::FfmFlatten>({{"interleaved", memory::FfmFlatten::kInterleaved},
                                       {"concatenated", memory::FfmFlatten::kConcatenated}}));
    v.field("decay_shape", decay_shape,
            named<memory::FfmDecayShape>(
                {{"outer", memory::FfmDecayShape::kOuter}, {"hadamard", memory::FfmDecayShape::kHadamard}}));
    v.field("double_precision", double_precision);
    v.field("input_gate", input_gate);
    v.field("output_gate", output_gate);
    v.field("oscillate", oscillate);
    v.field("learn_oscillate", learn_oscillate);
    v.field("decay", decay);
    v.field("learn_decay", learn_decay);
    v.field("clamp_writeback", clamp_writeback);
  }
  bool operator==(const FfmConfig&) const = default;
};

}  // namespace rlm
