// The first-order linear recurrence every linear memory runs on (design: docs/models/scans.md):
//   h_t = a_t ⊙ h_{t-1} + b_t,   t = 0 .. T-1,   h_{-1} = h0,
// with episode starts: where starts[t, b] is true the carried state is dropped (h_{t-1} is taken as 0, the initial
// state of every linear memory here): Lu et al. 2023's resetting operator (KF paper §4.3), as a gate a_t·(1 − s_t).
// One autograd op: forward and backward are single passes (backward is the reverse scan g_t = ∂h_t + a_{t+1}^* g_{t+1},
// ∂a_t = h_{t-1}^* g_t, ∂b_t = g_t, ∂h0 = a_0^* g_0; conjugates follow PyTorch's complex-gradient convention).
#pragma once
#include <torch/torch.h>

namespace rlm::scan {

/// a, b: [T, B, C], any strides (a broadcast gate such as gamma.expand({T, B, C}) is read in place, never copied);
/// h0: [B, C]; starts: [T, B] bool, or an undefined tensor for "no resets". Dtypes float32, float64, complex64,
/// complex128; a, b and h0 share one dtype and device. Returns every state, h: [T, B, C], contiguous.
/// CPU: parallel over (batch, channel blocks), each block walking time with a contiguous inner loop.
/// CUDA (when built with it): kernels chosen by workload (scan/linear_scan_cuda.cu).
torch::Tensor linear_scan(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0,
                          const torch::Tensor& starts = {});

/// The same recurrence as a plain loop of torch ops over T: slow, obviously right, differentiable by autograd.
/// Tests and benchmarks compare against it.
torch::Tensor linear_scan_reference(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0,
                                    const torch::Tensor& starts = {});

}  // namespace rlm::scan
