// The KF-layer backend's options (YAML section model.memory.kf), beside the backend (memory/kf.hpp); the registry
// (memory/registry.cpp) hands them to it.
#pragma once
#include <string>

#include "core/config_schema.hpp"

namespace rlm {

/// KF-layer options (model.memory.kf; kf.md, src/memory/kf.hpp). The layer width E is model.memory.hidden_size
/// (a Linear maps the input to E when the widths differ).
struct KfConfig {
  /// N, the state size of each layer (kf.md §1.7: 128).
  int state_size = 128;
  /// L, stacked KF layers.
  int num_layers = 1;
  /// kf (vSSM+KF, the paper's model), kf_u (vSSM+KF-u) or vssm (no Kalman update).
  std::string variant = "kf";
  /// RMSNorm output block (kf.md §1.7: on for DMC, off for POPGym and BestArm).
  bool rms_norm = false;
  /// 0: the predict step uses u_t (recommended); 1: the paper's literal u_{t-1} (kf.md §1.3).
  int input_lag = 0;
  /// time_invariant (the paper's final design) or input_dependent process noise (kf.md §1.8).
  std::string process_noise = "time_invariant";
  /// mean (the paper's final design) or mean_cov: the output Linear also reads the posterior variance.
  std::string output_features = "mean";

  template <class V>
  void visit(V& v) {
    v.field("state_size", state_size, in_range(1, kMaxWidth));
    v.field("num_layers", num_layers, in_range(1, 64));
    v.field("variant", variant, one_of({"kf", "kf_u", "vssm"}));
    v.field("rms_norm", rms_norm);
    v.field("input_lag", input_lag, in_range(0, 1));
    v.field("process_noise", process_noise, one_of({"time_invariant", "input_dependent"}));
    v.field("output_features", output_features, one_of({"mean", "mean_cov"}));
  }
  bool operator==(const KfConfig&) const = default;
};

}  // namespace rlm
