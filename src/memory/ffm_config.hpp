// The FFM backend's options (YAML section model.memory.ffm), beside the backend (memory/ffm.hpp); the registry
// (memory/registry.cpp) hands them to it.
#pragma once
#include <string>

#include "core/config_schema.hpp"

namespace rlm {

/// FFM options (model.memory.ffm; ffm.md, src/memory/ffm.hpp). The output width d is model.memory.hidden_size.
struct FfmConfig {
  /// m, rows of the decaying trace (POPGym: 32).
  int memory_size = 32;
  /// c, complex contexts per row (POPGym: 4).
  int context_size = 4;
  /// Longest initial period / memory horizon t_e (ffm.md §1.4; 128 for the POMDP-Baselines setup).
  double max_period = 1024;
  /// α/ω initialisation (ffm.md §5.1): code (reference code), paper (App. B eq. 31/33), periods (Fig. 6).
  std::string init = "code";
  /// Frequency sign (ffm.md §5.2): false = the code's exp(+iωt), true = the paper's exp(−iωt).
  bool conjugate_frequency = false;
  /// Order of the real features fed to the mixing Linear (ffm.md §5.3): interleaved (code) or concatenated (paper).
  std::string flatten = "interleaved";
  /// Decay shape (ffm.md §5.16): outer (FFM) or hadamard (the FFM-HP ablation).
  std::string decay_shape = "outer";
  /// Run the scan in complex128 (the reference code's batched path) instead of complex64.
  bool double_precision = false;
  /// Input gate x̃ = v ⊙ σ(ℓ2 x); false is the FFM-NI ablation, x̃ = v (ffm.md §1.2, §3.1 Table 3).
  bool input_gate = true;
  /// Output gate; false is the FFM-NO ablation, y = LN(z) + thru (ffm.md §1.2, §3.1 Table 3).
  bool output_gate = true;
  /// Oscillating contexts ω; false is FFM-NC: b filled with 1e-6 and frozen (ffm.md §3.1, models_algos.md §2.2).
  bool oscillate = true;
  /// Learn ω; false is FFM-FC, ω kept at its init (ffm.md §3.1, models_algos.md §7.4).
  bool learn_oscillate = true;
  /// Decay α; false is FFM-ND: a filled with 0 (−1e-8 after the clamp) and frozen (ffm.md §3.1, models_algos.md §2.2).
  bool decay = true;
  /// Learn α; false is FFM-FD, α kept at its init (ffm.md §3.1, models_algos.md §7.4).
  bool learn_decay = true;
  /// Write the clamp of a back into the parameter every forward, as the standalone cell (SHM's copy) does; false is
  /// the FFM paper's POPGym cell, which clamps only inside the graph (ffm.md §5.5).
  bool clamp_writeback = false;

  template <class V>
  void visit(V& v) {
    v.field("memory_size", memory_size, in_range(1, kMaxWidth));
    v.field("context_size", context_size, in_range(1, kMaxWidth));
    v.field("max_period", max_period, greater_than(0));
    v.field("init", init, one_of({"code", "paper", "periods"}));
    v.field("conjugate_frequency", conjugate_frequency);
    v.field("flatten", flatten, one_of({"interleaved", "concatenated"}));
    v.field("decay_shape", decay_shape, one_of({"outer", "hadamard"}));
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
