// Spiking-gate cell (SDG; spiking paper §4.2, App. A; docs/models/spiking.md): a complex diagonal linear
// recurrence whose input and output highways are opened by leaky spiking neurons (PSN-style LIF, no reset) with a
// Heaviside spike, an arctan surrogate gradient and a random threshold while training.
//
// Per step (spiking paper Eqs. 7–11, 20), with [Re, Im] pairs for the complex values:
//   m_t   = (1 − k) ⊙ m_{t−1} + k ⊙ u_t,   u = [W_i x, W_o x],  k = sigmoid(w) ∈ (0, 1)     (membranes, in and out)
//   s_t   = Θ(m_t − V_th)                  V_th = θ + X, X ~ U(noise_low, noise_high) when training; fixed when acting
//   h_t   = a_t ⊙ h_{t−1} + b_t,   a_t = c_t s^in_t + (1 − s^in_t),  b_t = (W_x x_t) s^in_t        (h ∈ C^{N_h})
//   ŷ_t   = s^out_t ⊙ h_t + (1 − s^out_t) ⊙ W_x x_t
//   out_t = LN(W_y [Re ŷ_t, Im ŷ_t])       (no affine parameters)
// Both recurrences run through rlm::scan::linear_scan (one real scan for the two membranes, one complex scan for h),
// in the order u → m-scan → s → a, b → h-scan → ŷ → out. Episode starts reset h and m to 0.
//
// Random thresholds: in training mode (is_training()) with noise_sampling = kPerStep, each forward draws one
// U[0, 1) tensor [T, B, 2·N_h] through Memory::draw_uniform (channels: input-gate neurons, then output-gate
// neurons): from the CPU stream a trainer sets (set_generator), moved to x's device, else from torch's global
// generator of that device. CPU draws are consumed element by element in memory order, so T calls with T = 1 from
// the same stream state draw exactly the same thresholds as one call over the sequence (the tests check this), on
// either device when a stream is set. In eval mode nothing is drawn.
// With noise_sampling = kPerSequence one rand({B, 2·N_h}) is drawn per call, so training-mode stepping draws anew
// at every step and only eval mode matches sequence mode. PpoTrainer rollouts must run in eval mode (model->eval())
// to act with the fixed threshold (spiking paper Eq. 8).
//
// Carried state (batch-first, 4·N_h floats per entry, spiking paper App. F.3): tensors[0] = h as [B, N_h, 2] (Re, Im;
// torch's view_as_real layout), tensors[1] = m as [B, 2·N_h] (input-gate membranes, then output-gate membranes). The
// initial state is all zeros (h_0 = m_0 = 0; the paper gives none).
//
// Parameters: in_proj (one Linear N_x → P holding W_x (Re, Im), W_i, W_o and, for the input-dependent forget gate,
// W_c (Re, Im), in that order along the output: P = 6·N_h, or 4·N_h with the LRU forget gate), leak_logit ([2, N_h],
// or [1, N_h] when shared), lru_nu_log / lru_phase_log ([N_h], LRU forget gate only), out_proj (Linear 2·N_h → N_out).
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "memory/memory.hpp"
#include "memory/spiking_config.hpp"
#include "nn/linear.hpp"

namespace rlm::memory {

/// How the threshold noise X is drawn in training mode (spiking paper Eq. 8 leaves it open).
enum class SpikingNoiseSampling {
  kPerStep,      ///< i.i.d. per (time, batch, neuron) on every forward (our default)
  kPerSequence,  ///< one draw per (batch, neuron) per forward, shared by all T steps
};

/// Parameter initialisation (the spiking paper gives none).
enum class SpikingInit {
  kTorchDefault,     ///< PyTorch Linear defaults U(±1/√fan_in), weights and biases (our default)
  kTruncatedNormal,  ///< Linear weights and biases ~ N(0, 0.02²) cut at ±0.04, as CTP314/TFPORL@e74ac70's LRU
};

/// What the cell reads: the YAML options (SpikingConfig, memory/spiking_config.hpp) plus N_h and the choices that
/// no config sets.
struct SpikingOptions : SpikingConfig {
  int64_t hidden_size = 128;  ///< N_h: channels and neurons per gate (spiking paper Table 8: PVM 128, POPGym 1024)
  bool shared_leak = false;   ///< one k vector for both gate neurons instead of one each
  SpikingNoiseSampling noise_sampling = SpikingNoiseSampling::kPerStep;  ///< granularity of X
  std::optional<double> acting_threshold;  ///< V_th when not training; unset: θ + E[X] (spiking paper Eq. 8)
  bool magnitude_in_tanh = true;  ///< tanh(r)/r; false: tanh(|ĉ|)/r, r = sqrt(|ĉ|²+1) (spiking paper Eq. 10)
  double lru_r_min = 0.8;         ///< LRU ring init, smallest |λ| (TFPORL's LRULayer default)
  double lru_r_max = 0.99;        ///< LRU ring init, largest |λ| (TFPORL's LRULayer default)
  double layer_norm_eps = 1e-5;   ///< eps of the output LN (PyTorch's default; the paper gives none)
  SpikingInit init = SpikingInit::kTorchDefault;  ///< initialisation scheme

  int64_t resolved_output_size() const { return output_size > 0 ? output_size : hidden_size; }
  /// The fixed threshold used when acting (eval mode) and by the sigmoid gate.
  double resolved_acting_threshold() const {
    return acting_threshold ? *acting_threshold : theta + 0.5 * (noise_low + noise_high);
  }
};

/// Heaviside spike Θ(z) (1 where z ≥ 0) whose backward is the chosen surrogate derivative (a custom autograd op).
torch::Tensor spike(const torch::Tensor& z, SpikingSurrogate surrogate);

/// Intermediate values of one forward, for tests and diagnostics (gate statistics, saliency).
struct SpikingTrace {
  torch::Tensor membrane;   ///< m: [T, B, 2·N_h] (input gates, then output gates)
  torch::Tensor threshold;  ///< V_th used: broadcastable to m (a scalar tensor when fixed)
  torch::Tensor gates;      ///< s: [T, B, 2·N_h]
  torch::Tensor hidden;     ///< h: [T, B, N_h] complex
};

class Spiking : public Memory {
 public:
  Spiking(int64_t input_size, const SpikingOptions& options);
  int64_t output_size() const override { return options_.resolved_output_size(); }
  MemoryState initial_state(int64_t batch, const torch::Device& device) const override;
  MemoryOutput forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) override;
  /// forward, also returning the intermediate values in `trace`.
  MemoryOutput forward_traced(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts,
                              SpikingTrace* trace);

  const SpikingOptions& options() const { return options_; }
  /// Number of real parameters for these sizes and options (tests compare it with parameters()).
  static int64_t parameter_count(int64_t input_size, const SpikingOptions& options);

 private:
  /// The forget gate c = (Re, Im) (spiking paper App. A): input-dependent from in_proj's split output (W_x Re, W_x Im,
  /// [W_i, W_o], W_c Re, W_c Im), or the LRU's [N_h].
  std::pair<torch::Tensor, torch::Tensor> forget_gate(const std::vector<torch::Tensor>& parts) const;

  SpikingOptions options_;
  int64_t input_size_;
  rlm::nn::Linear in_proj_{nullptr};
  rlm::nn::Linear out_proj_{nullptr};
  torch::Tensor leak_logit_;     // [2 or 1, N_h]
  torch::Tensor lru_nu_log_;     // [N_h], LRU forget gate only
  torch::Tensor lru_phase_log_;  // [N_h], LRU forget gate only
};

}  // namespace rlm::memory
