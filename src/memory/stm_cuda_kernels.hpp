// Internal to src/memory: the CUDA passes of STM's two fused per-step nodes (stm_item_write.hpp,
// stm_relational_write.hpp), in stm_cuda.cu; a build without CUDA has stubs that throw (in the nodes' files). Every
// tensor is float32, contiguous and on one device; the shapes are the nodes'. On a GPU torch's ops made one kernel
// per op and about ten passes over tensors of M^i's or M^r's size per node and direction; these make one kernel
// each (the relational backward a second, summing ∂α1 over the batch in a fixed order).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace rlm::memory {

/// Whether this build has the kernels and they take item size d and nq slots on CUDA device `device_index`: each
/// lane of a warp keeps up to eight of a row's d columns in registers (d <= 256), and the device's shared memory per
/// block holds the item backward's d·(d + 1) floats and the relational backward's (9·nq + 1)·d.
bool stm_cuda_fusable(int64_t item_size, int64_t slots, int device_index);

/// M^i_t from P [B, d, 2d], g [B, 1, 2d], a [B, d], M^i_{t−1} [B, d, d] into `out` [B, d, d].
void stm_item_write_cuda_forward(const at::Tensor& gate_pre, const at::Tensor& gate_x, const at::Tensor& a,
                                 const at::Tensor& item, at::Tensor& out);

/// Backward from ∂M^i_t, recomputing the gates and the write from the forward's inputs.
void stm_item_write_cuda_backward(const at::Tensor& grad, const at::Tensor& gate_pre, const at::Tensor& gate_x,
                                  const at::Tensor& a, const at::Tensor& item, at::Tensor& d_pre, at::Tensor& d_gate_x,
                                  at::Tensor& d_a, at::Tensor& d_item);

/// M^r_t [B, nq, d, d] into `out` and, where `next_weight` is not empty, the next read [B, 1, d] into `read`.
/// `prev` and `alpha1` ([1], read on the device) empty: the SAM output alone.
void stm_relational_cuda_forward(const at::Tensor& scores, const at::Tensor& value, const at::Tensor& prev,
                                 const at::Tensor& alpha1, const at::Tensor& next_weight, at::Tensor& out,
                                 at::Tensor& read);

/// Backward from ∂M^r_t and (where reads) ∂v; returns ∂α1 as a [1] tensor (zero where M^r is not carried).
at::Tensor stm_relational_cuda_backward(const at::Tensor& grad, const at::Tensor& d_read, const at::Tensor& scores,
                                        const at::Tensor& value, const at::Tensor& prev, const at::Tensor& alpha1,
                                        const at::Tensor& next_weight, const at::Tensor& out, at::Tensor& d_scores,
                                        at::Tensor& d_value, at::Tensor& d_prev, at::Tensor& d_next_weight);

}  // namespace rlm::memory
