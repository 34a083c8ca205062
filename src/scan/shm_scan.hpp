// SHM's memory write and read fused into one op, so that no [T, B, H, H] tensor ever exists (docs/models/scans.md).
// Per batch entry b and step t, with rank-1 calibration and update generated on the fly:
//   C_t[i, j] = 1 + tanh(theta_t[i] · vc_t[j])        U_t[i, j] = eta_t · v_t[i] · k_t[j]
//   M_t = C_t ⊙ M_{t-1} + U_t     (M_{t-1} taken as 0 where starts[t, b]; M_{-1} = m0)
//   optional clamp: M_t ← clamp(M_t, -state_clamp, state_clamp) (pomdp-baselines; not associative, so sequential)
//   y_t[i] = Σ_j M_t[i, j] · q_t[j]
// Backward recomputes M inside chunks of time from stored chunk-boundary states (memory O(B·H²·T/chunk)).
#pragma once
#include <torch/torch.h>

namespace rlm::scan {

struct ShmScanOutput {
  torch::Tensor y;       ///< [T, B, H]
  torch::Tensor m_last;  ///< [B, H, H], the state after the last step
};

/// theta, vc, v, k, q: [T, B, H]; eta: [T, B]; m0: [B, H, H]; starts: [T, B] bool or undefined. float32 or float64.
/// state_clamp <= 0 disables the clamp. Differentiable in every tensor input (theta per step: the caller gathers the
/// drawn table rows, and autograd scatters their gradient back).
ShmScanOutput shm_scan(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                       const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q, const torch::Tensor& m0,
                       const torch::Tensor& starts = {}, double state_clamp = 0.0);

/// The same computation with materialised C and U and a loop of torch ops (tests only: O(T·B·H²) memory).
ShmScanOutput shm_scan_reference(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                                 const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q,
                                 const torch::Tensor& m0, const torch::Tensor& starts = {}, double state_clamp = 0.0);

}  // namespace rlm::scan
