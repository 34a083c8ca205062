// The Kalman-filter layer's parallel scan, per channel (diagonal model, C = I; KF paper Eq. 4–6, input indexed u_t):
//   predict  x⁻_t = a ⊙ x⁺_{t-1} + β ⊙ u_t,      P⁻_t = a² ⊙ P⁺_{t-1} + q_t
//   update   k_t = P⁻_t ⊘ (P⁻_t + r_t),  x⁺_t = x⁻_t + k_t ⊙ (w_t − x⁻_t),  P⁺_t = (1 − k_t) ⊙ P⁻_t
// starting from the belief N(init_mean, init_var) before step 0. Where starts[t, b] is true the belief before step t
// is the reset belief N(reset_mean, reset_var) (KF paper Table 1: N(0, I)). Where pad[t, b] is true step t is skipped
// entirely (start flag included): x⁺_t, P⁺_t repeat the previous belief (masked operator, KF paper §4.3).
//
// Scan elements are Särkkä & García-Fernández's 5-tuples e = (A, b, C, η, J); the inclusive prefix e_0 • … • e_t
// has b = x⁺_t and C = P⁺_t. Step 0 and every reset position get a "first element" (0, x⁺, P⁺, 0, 0) computed from
// the prior belief, padded positions the identity (1, 0, 0, 0, 0) (at t = 0 the belief element (0, m, P, 0, 0) of the
// initial belief, so that a sequence padded from its start still repeats that belief). The prefix is a Hillis–Steele
// scan over time: ⌈log2 T⌉ rounds of whole-tensor ops over [T, B, N], so it is differentiable by autograd and runs
// unchanged on any device. kf_scan runs the filter sequentially instead, on the CPU and on a GPU (same result up to
// rounding).
#pragma once
#include <torch/torch.h>

namespace rlm::scan {

/// Inputs of kf_scan. Every per-step tensor is [T, B, N]; a, beta and q may be any shape that broadcasts to it
/// ([N] for the time-invariant parameters). All tensors share one floating dtype and device.
struct KfScanInputs {
  torch::Tensor a;          ///< state decay diag(A), e.g. [N]
  torch::Tensor beta;       ///< input gain diag(B), e.g. [N]; unused (may be undefined) when u is undefined
  torch::Tensor q;          ///< process noise diag(Σᵖ) > 0: [N] (time-invariant) or [T, B, N] (input-dependent)
  torch::Tensor u;          ///< input [T, B, N]; undefined: no input (the vSSM+KF-u variant, u ≡ 0)
  torch::Tensor w;          ///< latent observation [T, B, N]
  torch::Tensor r;          ///< observation noise diag(Σᵒ_t) > 0, [T, B, N]
  torch::Tensor init_mean;  ///< belief before step 0, [B, N]; undefined: the reset belief
  torch::Tensor init_var;   ///< [B, N] > 0; undefined: the reset belief
  torch::Tensor starts;     ///< [T, B] bool, true: reset the belief before step t; undefined: no resets
  torch::Tensor pad;        ///< [T, B] bool, true: step t is padding (skipped); undefined: no padding
  double reset_mean = 0.0;  ///< reset belief N(reset_mean, reset_var) (KF paper Table 1: N(0, I))
  double reset_var = 1.0;
};

/// Posterior mean x⁺ and variance P⁺ at every step, [T, B, N] each.
struct KfScanOutput {
  torch::Tensor mean;
  torch::Tensor var;
};

/// The scan elements, one tensor per component (same shapes).
struct KfElements {
  torch::Tensor A, b, C, eta, J;
};

/// Särkkä's combine e_i • e_j (e_i earlier; docs/models/scans.md): with D = 1 + C_i J_j (≥ 1 for valid elements),
/// A = A_j A_i / D, b = A_j (b_i + C_i η_j) / D + b_j, C = A_j² C_i / D + C_j, η = A_i (η_j − J_j b_i) / D + η_i,
/// J = A_i² J_j / D + J_i.
KfElements kf_combine(const KfElements& earlier, const KfElements& later);

/// The posteriors at every step. In float32 and float64, on the CPU and (in a build with CUDA kernels) on a GPU, the
/// filter runs forward in time as one fused op (kf_filter.hpp): O(T) work in one pass, where the associative scan is
/// O(T log T) in whole-tensor passes; elsewhere kf_scan_parallel.
KfScanOutput kf_scan(const KfScanInputs& in);

/// The parallel scan (Hillis–Steele over time), on any device. T may be 1 (then no combine runs).
KfScanOutput kf_scan_parallel(const KfScanInputs& in);

/// Equations (4)–(6) as a sequential loop of torch ops over T: slow, obviously right, differentiable. Test oracle.
KfScanOutput kf_scan_reference(const KfScanInputs& in);

/// h_t = alpha_t ⊙ h_{t-1} + c_t over [T, B, N] (alpha broadcastable to it) from h_{-1} = h0 ([B, N]; undefined:
/// zeros); where starts[t, b] the carried state is dropped (h_{t-1} taken as 0), where pad[t, b] step t is skipped
/// (h_t = h_{t-1}). Hillis–Steele over (alpha, c) pairs with (α_i, c_i) • (α_j, c_j) = (α_j α_i, α_j c_i + c_j).
/// The vSSM variant of the KF layer (KF paper §5.1) runs on it, so the KF backend does not depend on
/// linear_scan.
torch::Tensor diag_linear_scan(const torch::Tensor& alpha, const torch::Tensor& c, const torch::Tensor& h0,
                               const torch::Tensor& starts = {}, const torch::Tensor& pad = {});

/// The same recurrence as a sequential loop (test oracle).
torch::Tensor diag_linear_scan_reference(const torch::Tensor& alpha, const torch::Tensor& c, const torch::Tensor& h0,
                                         const torch::Tensor& starts = {}, const torch::Tensor& pad = {});

}  // namespace rlm::scan
