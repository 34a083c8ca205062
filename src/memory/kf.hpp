// Kalman-filter (KF) layer memory: the KF paper (§3.4 Eqs. 4–6, §4.2, App. B, Table 1; docs/models/kf.md).
// Each layer (E → E):
//   [u_t, w_t, r̃_t (, q̃_t)] = Linear(E → kN)(h_t),  r_t = softplus(r̃_t) + 1e-6
//   diagonal KF over N channels (scan/kf_scan.hpp): x⁻_t = a x⁺_{t-1} + β u_t, P⁻_t = a² P⁺_{t-1} + q,
//   k_t = P⁻_t / (P⁻_t + r_t), x⁺_t = x⁻_t + k_t (w_t − x⁻_t), P⁺_t = (1 − k_t) P⁻_t
//   z_t = Linear(N → E)(x⁺_t)   (or Linear(2N → E)([x⁺_t, P⁺_t]) with output_features = mean_cov)
// a = exp(Δ Ã), β = (exp(Δ Ã) − 1) / Ã · B̃ (zero-order hold), Ã = −exp(A_log) with A_log = log(1..N) (HiPPO diagonal),
// B̃ = 1, Δ = softplus(Δ̃) one scalar per layer with Δ̃ = −7, q = softplus(q̃) with q̃ = ln(e − 1) (q = 1).
// process_noise = input_dependent (KF paper §4.2, App. E): a fourth chunk q̃_t of the input projection gives
// q_t = softplus(q̃ + q̃_t), i.e. the learnable time-invariant q̃ becomes the offset of a per-step noise.
// L layers are stacked without residuals or nonlinearities, with an optional RMSNorm at the end (KF paper §4.2).
// The belief resets to N(0, I) at every episode start.
//
// Input mapping: the layers are E → E with E = options.hidden_size; when the input width D differs from E a
// Linear(D → E) (with bias) maps the input first. hidden_size = 0 means E = D (no input map), as in the paper, where
// the embedder already produces E.
//
// State (MemoryState::tensors, all [B, N], per layer l in order): posterior mean x⁺, posterior variance P⁺ (not for
// variant vssm), and the previous step's input u (only with input_lag = 1 and a variant that has u).
#pragma once
#include <string>

#include "memory/kf_config.hpp"
#include "memory/memory.hpp"
#include "nn/linear.hpp"

namespace rlm::memory {

enum class KfPositive { softplus, exp };

/// What the layer reads: the YAML options (KfConfig, memory/kf_config.hpp) plus the width and the choices that no
/// config sets (docs/models/kf.md).
struct KfOptions : KfConfig {
  int64_t hidden_size = 0;                     ///< E, the layer width (KF paper Fig. 2); 0: E = input size
  bool rms_norm_every_layer = false;           ///< with rms_norm: after every layer, not once at the end
  KfPositive positive = KfPositive::softplus;  ///< positivity map of q and r (the paper names none)
  bool learn_ab = true;                        ///< Ã (A_log) and B̃ trainable, else buffers (as Mamba's A_log)
  double dt_raw_init = -7.0;                   ///< Δ̃ init, Δ = softplus(Δ̃) (KF paper Table 1)
};

/// One KF layer (E → E). Public for tests (coefficients()).
class KfLayer : public torch::nn::Module {
 public:
  KfLayer(int64_t width, const KfOptions& options);

  /// The discrete-time coefficients as used in the scan: a, β (undefined for kf_u), q (time-invariant part), each [N].
  struct Coefficients {
    torch::Tensor a, beta, q;
  };
  Coefficients coefficients() const;

  /// Number of state tensors this layer carries.
  int64_t state_tensors() const;
  /// Appends this layer's initial state ([B, N] tensors) to `out`.
  void initial_state(int64_t batch, const torch::TensorOptions& options, std::vector<torch::Tensor>& out) const;
  /// h: [T, B, E]; state: this layer's tensors; returns z [T, B, E] and appends the new state to `new_state`.
  torch::Tensor forward(const torch::Tensor& h, const torch::Tensor* state, const torch::Tensor& starts,
                        std::vector<torch::Tensor>& new_state);

 private:
  torch::Tensor positive(const torch::Tensor& raw) const;

  KfOptions options_;
  int64_t n_;
  bool has_u_;
  bool has_kf_;
  rlm::nn::Linear in_proj_{nullptr};
  rlm::nn::Linear out_proj_{nullptr};
  torch::Tensor a_log_, b_tilde_, q_raw_, dt_raw_;
};

class Kf : public Memory {
 public:
  Kf(int64_t input_size, const KfOptions& options = {});
  int64_t output_size() const override { return width_; }
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;

  const KfOptions& options() const { return options_; }
  const KfLayer& layer(int64_t index) const { return *layers_.at(static_cast<size_t>(index)); }

 private:
  torch::Tensor rms(const torch::Tensor& h, const torch::Tensor& gain) const;

  KfOptions options_;
  int64_t width_;
  rlm::nn::Linear input_map_{nullptr};
  std::vector<std::shared_ptr<KfLayer>> layers_;
  std::vector<torch::Tensor> norm_gains_;
};

}  // namespace rlm::memory
