// The GRU's gate arithmetic for one step on the CPU, in float32, as one pass over each row.
//
// Why: GruRecurrence (gru.cpp) runs the recurrence step by step around one GEMM per step. Around that GEMM, torch ops
// did the gates: about 8 elementwise ops forward and 17 backward per step, each a full pass (and a dispatch) over a
// [B, H] or [B, 3H] slice: 51 steps × 32 minibatches × 2 per PPO iteration in `./rlm bench peers`' setting. These
// functions do each step's gate arithmetic in one pass, compiled for AVX-512 / AVX2 / baseline (scan/simd_clones.hpp).
// Same equations and gate order as torch's GRU (r, z, n blocks); sigmoid and tanh are libm's (vectorised by libmvec
// where the compiler can), so results agree with torch's to float32 rounding, not bitwise.
#pragma once
#include <cstdint>

namespace rlm::memory {

/// One step forward for `batch` rows of `hidden` units, every array row-major and dense:
/// gi, gh [batch, 3H] (x·W_ihᵀ + b_ih and h·W_hhᵀ + b_hh, blocks r, z, n), hp [batch, H] (the state before the step).
/// Writes rz [batch, 2H] (r | z), n and gh_n (gh's n block) [batch, H], and y [batch, H] = n + z ⊙ (hp − n).
void gru_gates_forward(const float* gi, const float* gh, const float* hp, int64_t batch, int64_t hidden, float* rz,
                       float* n, float* gh_n, float* y);

/// One step backward from ∂y + ∂(next state) = dh [batch, H], with the forward's rz, n, gh_n and hp.
/// Writes d_gi [batch, 3H] (∂ of the gates' pre-activations: r, z, n), d_gh [batch, 3H] (the same for gh: d_r, d_z,
/// d_n ⊙ r) and dh_z [batch, H] = dh ⊙ z (∂hp = d_gh·W_hh + dh_z, the GEMM done by the caller).
void gru_gates_backward(const float* dh, const float* rz, const float* n, const float* gh_n, const float* hp,
                        int64_t batch, int64_t hidden, float* d_gi, float* d_gh, float* dh_z);

}  // namespace rlm::memory
