// STM's gated item-memory write for one step in float32 (SAM paper Eq. 10 in stm_basic.py's form), as one autograd
// node: M^i_t = σ(P_I + g_I) ⊙ tanh(a aᵀ) + σ(P_F + g_F) ⊙ M^i_{t−1}, where P = tanh(M^i_{t−1})·Wg_memᵀ is
// the gates' memory term per row of M^i (the caller's GEMM) and g the x-term broadcast over rows.
//
// Why: as torch ops this was about ten passes over [B, d, d]- and [B, d, 2d]-sized tensors forward (the add, the
// sigmoid, two gate slices, the outer product, its tanh, two products and a sum) and about fifteen backward, each a
// dispatch of its own; per step these are one pass each way, with sigmoid and tanh from libmvec, compiled for
// AVX-512 / AVX2 / baseline (scan/simd_clones.hpp). On a GPU one kernel each way (stm_cuda.cu), where backward
// recomputes the gates and the write instead of storing them.
#pragma once
#include <torch/torch.h>

namespace rlm::memory {

/// gate_pre P [B, d, 2d] (per row of M^i: the input gate's d pre-activations, then the forget gate's), gate_x g
/// [B, 1, 2d] (the x-term with every gate bias folded in), a = f1(x) [B, d], item M^i_{t−1} [B, d, d]; returns
/// M^i_t [B, d, d]. Float32 on the CPU or a CUDA device (stm_cuda_fusable); differentiable in every tensor.
torch::Tensor stm_item_write(const torch::Tensor& gate_pre, const torch::Tensor& gate_x, const torch::Tensor& a,
                             const torch::Tensor& item);

}  // namespace rlm::memory
