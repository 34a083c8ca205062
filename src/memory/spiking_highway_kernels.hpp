// Internal to src/memory: the inputs of the spiking cell's fused highways (spiking_highway.cpp) and their CUDA passes
// (spiking_highway_cuda.cu; a build without CUDA has stubs that throw, in spiking_highway.cpp).
#pragma once
#include <ATen/ATen.h>

namespace rlm::memory {

/// [T, B, N] tensors with channel stride 1 (any time and batch strides, 0 for broadcasts); h0 contiguous [B, N, 2];
/// starts contiguous bool [T, B] or undefined.
struct SpikingHighwayInputs {
  at::Tensor wx_re, wx_im, c_re, c_im, s_in, s_out, h0, starts;
};

/// One thread per (b, n) channel walking time: ŷ into y_hat [T, B, 2N] (Re, then Im) and h into hidden [T, B, N, 2].
void spiking_highway_cuda_forward(const SpikingHighwayInputs& in, at::Tensor& y_hat, at::Tensor& hidden);

/// The reverse pass; grad_y, grad_hidden contiguous or undefined; the d_ tensors contiguous [T, B, N] and d_h0
/// [B, N, 2].
void spiking_highway_cuda_backward(const SpikingHighwayInputs& in, const at::Tensor& hidden, const at::Tensor& grad_y,
                                   const at::Tensor& grad_hidden, at::Tensor& d_wx_re, at::Tensor& d_wx_im,
                                   at::Tensor& d_c_re, at::Tensor& d_c_im, at::Tensor& d_s_in, at::Tensor& d_s_out,
                                   at::Tensor& d_h0);

}  // namespace rlm::memory
