// The spiking-gate cell backend's options (YAML section model.memory.spiking), beside the backend (memory/spiking.hpp);
// the registry (memory/registry.cpp) hands them to it.
#pragma once
#include <string>

#include "core/config_schema.hpp"

namespace rlm {

/// Spiking-gate cell options (model.memory.spiking; spiking.md, src/memory/spiking.hpp). N_h is
/// model.memory.hidden_size.
struct SpikingConfig {
  /// Output width; 0 means the hidden size.
  int output_size = 0;
  /// Initial membrane leak k0 = 1/τ_m (spiking.md §1.2), in (0, 1).
  double leak_init = 0.5;
  /// θ of the threshold V_th = θ + X (spiking.md §1.2: 1 for Passive Visual Match, 0 for the other RL tasks).
  double theta = 0.0;
  /// X ~ U(noise_low, noise_high) while training; equal bounds give a constant threshold (noise_low <= noise_high).
  double noise_low = 0.0;
  double noise_high = 1.0;
  /// input_dependent (ĉ = W_c x) or lru (learned per-channel decay) forget gate (spiking.md §1.3).
  std::string forget_gate = "input_dependent";
  /// Spike backward: atan (1/(1+(πx)²), the paper's), gaussian (ablation) or none (true zero gradient).
  std::string surrogate = "atan";
  /// spike (the cell) or sigmoid (the "w/ sigmoid" ablation).
  std::string gate = "spike";

  template <class V>
  void visit(V& v) {
    v.field("output_size", output_size, in_range(0, kMaxWidth));
    v.field("leak_init", leak_init, Range{0, 1, true, true});
    v.field("theta", theta, any_number());
    v.field("noise_low", noise_low, any_number());
    v.field("noise_high", noise_high, any_number());
    v.field("forget_gate", forget_gate, one_of({"input_dependent", "lru"}));
    v.field("surrogate", surrogate, one_of({"atan", "gaussian", "none"}));
    v.field("gate", gate, one_of({"spike", "sigmoid"}));
  }
  bool operator==(const SpikingConfig&) const = default;
};

}  // namespace rlm
