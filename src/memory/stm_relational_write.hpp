// STM's relational write for one step in float32: the SAM's outer-product attention, the M^r update and
// the next step's M^r read (SAM paper Eqs. 11–12) as one autograd node whose passes go over M^r's rows once each way.
//
// Why: at the paper's size (d = 96, nq = nkv = 8) M^r holds 73,728 floats per sample, and per step torch ops made
// about seventeen passes over tensors that size, most of them memory-bound: the attention as a batched GEMM with
// K = nkv = 8, α1·M^r added in a second pass, the read as a third; in backward two batched GEMMs with N or M = 8
// reading ∂M^r, the read's rank-1 gradient written out and added, α1·∂M^r and Σ ∂M^r ⊙ M^r_{t−1} as separate passes.
// Here the forward reads M^r_{t−1} and writes M^r_t once, summing the next step's read as the rows are written; the
// backward reads ∂M^r_t, M^r_{t−1} and M^r_t and writes ∂M^r_{t−1} once, the read's gradient added in registers. V
// and ∂V (nkv × d) stay in L1. The passes are compiled for AVX-512 / AVX2 / baseline (scan/simd_clones.hpp). On a
// GPU each pass is one kernel (stm_cuda.cu), α1 read on the device.
#pragma once
#include <torch/torch.h>

namespace rlm::memory {

struct RelationalWrite {
  torch::Tensor rel;        ///< M^r_t [B, nq, d, d]
  torch::Tensor next_read;  ///< v^r_{t+1} [B, 1, d] = Σ_{s,a} w[s, a] M^r_t[s, a, :] (undefined without next_weight)
};

/// M^r_t[s, a, c] = α1·M^r_{t−1}[s, a, c] + Σ_j T[j, s, a] V[j, c], for scores T [B, nkv, nq, d]
/// (T[j, s, a] = tanh(Q[s, a] K[j, a])) and value V [B, nkv, d]; `prev` M^r_{t−1} [B, nq, d, d] and `alpha1` [1]
/// undefined: the SAM output alone (M^r not carried). `next_weight` [B, 1, nq·d] (the next step's p[s]·f2[a]), when
/// defined, adds the next step's read of M^r_t. Float32 on the CPU or a CUDA device (stm_cuda_fusable); differentiable
/// in every tensor.
RelationalWrite stm_relational_write(const torch::Tensor& scores, const torch::Tensor& value, const torch::Tensor& prev,
                                     const torch::Tensor& alpha1, const torch::Tensor& next_weight);

}  // namespace rlm::memory
