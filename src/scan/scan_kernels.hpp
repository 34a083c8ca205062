// Internal to src/scan: the shape/stride record the scan ops share, and the CUDA entry points. The .cu files
// implement these when the build has CUDA; otherwise the .cpp files define stubs that fail with a clear message.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace rlm::scan {

struct ScanArgs {
  int64_t steps = 0, batch = 0, channels = 0;
  int64_t a_stride[3] = {0, 0, 0};  // element strides of a over (t, b, c); a may be a broadcast view
  int64_t b_stride[3] = {0, 0, 0};
};

/// h (contiguous [T, B, C]) = scan of a, b from h0 (contiguous [B, C]); starts contiguous [T, B] bool or undefined.
void linear_scan_cuda_forward(const ScanArgs& args, const at::Tensor& a, const at::Tensor& b, const at::Tensor& h0,
                              const at::Tensor& starts, at::Tensor& h);
/// grad_h, h contiguous; writes contiguous grad_a, grad_b ([T, B, C]) and grad_h0 ([B, C]).
void linear_scan_cuda_backward(const ScanArgs& args, const at::Tensor& a, const at::Tensor& h0,
                               const at::Tensor& starts, const at::Tensor& h, const at::Tensor& grad_h,
                               at::Tensor& grad_a, at::Tensor& grad_b, at::Tensor& grad_h0);

}  // namespace rlm::scan
