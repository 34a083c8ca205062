// Internal to src/scan: the inputs of the KF layer's fused filter (kf_filter.cpp) and its CUDA passes
// (kf_filter_cuda.cu; a build without CUDA has stubs that throw, in kf_filter.cpp).
#pragma once
#include <ATen/ATen.h>

namespace rlm::scan {

/// [T, B, N] tensors with channel stride 1 (a, q may broadcast over T and B through zero strides); bu undefined
/// without input; m0, p0 the belief before step 0, contiguous [B, N]; starts, pad contiguous bool [T, B] or undefined.
struct KfFilterInputs {
  at::Tensor a, bu, q, w, r, m0, p0;
  at::Tensor starts, pad;
  double reset_mean, reset_var;
};

/// One thread per (b, n) channel walking time: the posteriors into `mean`, `var` (contiguous [T, B, N]).
void kf_filter_cuda_forward(const KfFilterInputs& in, at::Tensor& mean, at::Tensor& var);

/// The adjoint, walking time in reverse from the saved posteriors; grad_mean, grad_var contiguous or undefined. The
/// d_ tensors are contiguous: [T, B, N] (d_bu undefined without input), d_m0, d_p0 [B, N].
void kf_filter_cuda_backward(const KfFilterInputs& in, const at::Tensor& mean, const at::Tensor& var,
                             const at::Tensor& grad_mean, const at::Tensor& grad_var, at::Tensor& d_a, at::Tensor& d_bu,
                             at::Tensor& d_q, at::Tensor& d_w, at::Tensor& d_r, at::Tensor& d_m0, at::Tensor& d_p0);

}  // namespace rlm::scan
