// The spiking-gate cell's options (YAML section model.memory.spiking), beside the backend (memory/spiking.hpp), which
// reads this struct itself (SpikingOptions extends it with the widths and the other choices): an option is
// added here and used there, nowhere else.
#pragma once
#include <fmt/format.h>

#include "core/config_schema.hpp"

namespace rlm::memory {

/// Forget gate c_t of the cell (spiking paper App. A, which never says which one an experiment used).
enum class SpikingForgetGate {
  kInputDependent,  ///< ĉ = W_c x, c = ĉ·tanh(r)/r with r = sqrt(|ĉ|² + 1) (spiking paper Eq. 10, our default)
  kLru,             ///< c = exp(−exp(ν) + i·exp(φ)), learnable per channel, LRU ring init (App. A's LRU style)
};

/// Backward of the Heaviside spike (spiking paper §4.2, §5.3, App. C.3).
enum class SpikingSurrogate {
  kAtan,      ///< Θ'(z) := 1/(1 + (πz)²) (spiking paper §4.2)
  kGaussian,  ///< Θ'(z) := exp(−z²/2)/√(2π) ("Gaussian as SG" ablation, spiking paper §5.3)
  kNone,      ///< the true gradient of Θ, zero (saliency diagnostic, spiking paper App. C.3)
};

/// What opens the highways.
enum class SpikingGate {
  kSpike,    ///< s = Θ(m − V_th) with the surrogate above (the cell)
  kSigmoid,  ///< s = σ(m − acting threshold), no noise (our reading of the spiking paper's §5.2 sigmoid variant)
};

}  // namespace rlm::memory

namespace rlm {

/// Spiking-gate cell options (model.memory.spiking; docs/models/spiking.md, src/memory/spiking.hpp). N_h is
/// model.memory.hidden_size.
struct SpikingConfig {
  /// Output width; 0 means the hidden size.
  int output_size = 0;
  /// Initial membrane leak k0 = 1/τ_m (spiking paper §4.2, App. F.3), in (0, 1).
  double leak_init = 0.5;
  /// θ of the threshold V_th = θ + X (spiking paper App. F.3: 1 for Passive Visual Match, 0 for the other RL tasks).
  double theta = 0.0;
  /// X ~ U(noise_low, noise_high) while training; equal bounds give a constant threshold (noise_low <= noise_high).
  double noise_low = 0.0;
  double noise_high = 1.0;
  /// input_dependent (ĉ = W_c x) or lru (learned per-channel decay) forget gate (spiking paper App. A).
  memory::SpikingForgetGate forget_gate = memory::SpikingForgetGate::kInputDependent;
  /// Spike backward: atan (1/(1+(πx)²), the paper's), gaussian (ablation) or none (true zero gradient).
  memory::SpikingSurrogate surrogate = memory::SpikingSurrogate::kAtan;
  /// spike (the cell) or sigmoid (the "w/ sigmoid" ablation).
  memory::SpikingGate gate = memory::SpikingGate::kSpike;

  template <class V>
  void visit(V& v) {
    v.field("output_size", output_size, in_range(0, kMaxWidth));
    v.field("leak_init", leak_init, Range{0, 1, true, true});
    v.field("theta", theta, any_number());
    v.field("noise_low", noise_low, any_number());
    v.field("noise_high", noise_high, any_number());
    v.field("forget_gate", forget_gate,
            named<memory::SpikingForgetGate>({{"input_dependent", memory::SpikingForgetGate::kInputDependent},
                                              {"lru", memory::SpikingForgetGate::kLru}}));
    v.field("surrogate", surrogate,
            named<memory::SpikingSurrogate>({{"atan", memory::SpikingSurrogate::kAtan},
                                             {"gaussian", memory::SpikingSurrogate::kGaussian},
                                             {"none", memory::SpikingSurrogate::kNone}}));
    v.field("gate", gate,
            named<memory::SpikingGate>(
                {{"spike", memory::SpikingGate::kSpike}, {"sigmoid", memory::SpikingGate::kSigmoid}}));
  }
  void check(const CheckContext& c) const {
    if (noise_low > noise_high) {
      c.report({c.key("noise_low"), c.key("noise_high")},
               fmt::format("{} = {} exceeds {} = {}", c.key("noise_low"), noise_low, c.key("noise_high"), noise_high));
    }
  }
  bool operator==(const SpikingConfig&) const = default;
};

}  // namespace rlm
