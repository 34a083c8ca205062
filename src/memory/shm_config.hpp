// The SHM backend's options (YAML section model.memory.shm), beside the backend (memory/shm.hpp), which reads this
// struct itself (ShmOptions extends it with H): an option is added here and used there, nowhere else.
#pragma once
#include <string>

#include "core/config_schema.hpp"

namespace rlm {

/// SHM options (YAML section model.memory.shm; docs/models/shm.md, src/memory/shm.hpp). H is model.memory.hidden_size.
struct ShmConfig {
  /// Width of SHM's output Linear (POPGym post_size 1024).
  int output_size = 1024;
  /// Rows of the θ table (L = 128 in every experiment of the paper).
  int num_thetas = 128;
  /// Calibration (SHM paper §4.4): random_theta is SHM; the others are the paper's ablations.
  std::string calibration = "random_theta";
  /// uniform: a θ row per (batch entry, step); index0_compat: always row 0, as the released POPGym code does.
  std::string theta_sampling = "uniform";
  /// Clamp the memory to ±state_clamp after every step (pomdp-baselines: 100); 0 turns it off (POPGym code).
  double state_clamp = 100.0;
  /// Add the residual Linear(x̃) to the read (both RL codebases).
  bool shortcut = true;

  template <class V>
  void visit(V& v) {
    v.field("output_size", output_size, in_range(1, kMaxWidth));
    v.field("num_thetas", num_thetas, in_range(1, kMaxWidth));
    v.field("calibration", calibration,
            one_of({"random_theta", "fixed_theta", "neural_theta", "fixed_c", "random_c", "ones"}));
    v.field("theta_sampling", theta_sampling, one_of({"uniform", "index0_compat"}));
    v.field("state_clamp", state_clamp, at_least(0));
    v.field("shortcut", shortcut);
  }
  bool operator==(const ShmConfig&) const = default;
};

}  // namespace rlm
