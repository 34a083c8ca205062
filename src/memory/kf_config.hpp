// The KF layer's options (YAML section model.memory.kf), beside the backend (memory/kf.hpp), which reads this struct
// itself (KfOptions extends it with the width and the fixed choices): an option is added here and used there.
#pragma once
#include "core/config_schema.hpp"

namespace rlm::memory {

enum class KfVariant { kf, kf_u, vssm };
enum class KfProcessNoise { time_invariant, input_dependent };
enum class KfOutputFeatures { mean, mean_cov };

}  // namespace rlm::memory

namespace rlm {

/// KF-layer options (model.memory.kf; docs/models/kf.md, src/memory/kf.hpp). The layer width E is
/// model.memory.hidden_size (a Linear maps the input to E when the widths differ).
struct KfConfig {
  /// N, the state size of each layer (KF paper Table 1: 128).
  int state_size = 128;
  /// L, stacked KF layers.
  int num_layers = 1;
  /// kf (vSSM+KF, the paper's model), kf_u (vSSM+KF-u) or vssm (no Kalman update).
  memory::KfVariant variant = memory::KfVariant::kf;
  /// RMSNorm output block (KF paper Table 1: on for DMC, off for POPGym and BestArm).
  bool rms_norm = false;
  /// 0: the predict step uses u_t (our default, docs/models/kf.md); 1: the literal u_{t-1} of KF paper Eq. 4.
  int input_lag = 0;
  /// time_invariant (the paper's final design) or input_dependent process noise (KF paper §4.2, App. E).
  memory::KfProcessNoise process_noise = memory::KfProcessNoise::time_invariant;
  /// mean (the paper's final design) or mean_cov: the output Linear also reads the posterior variance.
  memory::KfOutputFeatures output_features = memory::KfOutputFeatures::mean;

  template <class V>
  void visit(V& v) {
    v.field("state_size", state_size, in_range(1, kMaxWidth));
    v.field("num_layers", num_layers, in_range(1, 64));
    v.field("variant", variant,
            named<memory::KfVariant>(
                {{"kf", memory::KfVariant::kf}, {"kf_u", memory::KfVariant::kf_u}, {"vssm", memory::KfVariant::vssm}}));
    v.field("rms_norm", rms_norm);
    v.field("input_lag", input_lag, in_range(0, 1));
    v.field("process_noise", process_noise,
            named<memory::KfProcessNoise>({{"time_invariant", memory::KfProcessNoise::time_invariant},
                                           {"input_dependent", memory::KfProcessNoise::input_dependent}}));
    v.field("output_features", output_features,
            named<memory::KfOutputFeatures>(
                {{"mean", memory::KfOutputFeatures::mean}, {"mean_cov", memory::KfOutputFeatures::mean_cov}}));
  }
  /// vssm has neither the noise nor the variance that two options shape.
  void check(const CheckContext& c) const {
    if (variant == memory::KfVariant::vssm && process_noise == memory::KfProcessNoise::input_dependent) {
      c.report({c.key("process_noise"), c.key("variant")},
               c.key("process_noise") + " = input_dependent needs variant kf or kf_u (vssm has no noise)");
    }
    if (variant == memory::KfVariant::vssm && output_features == memory::KfOutputFeatures::mean_cov) {
      c.report({c.key("output_features"), c.key("variant")},
               c.key("output_features") + " = mean_cov needs variant kf or kf_u (vssm has no variance)");
    }
  }
  bool operator==(const KfConfig&) const = default;
};

}  // namespace rlm
