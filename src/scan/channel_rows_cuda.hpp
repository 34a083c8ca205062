// channel_rows.hpp's counterpart for CUDA kernels (nvcc only) that walk time over [T, B, N] tensors with one thread
// per (batch entry, channel), the channel fastest (kf_filter_cuda.cu, memory/spiking_highway_cuda.cu): rows read in
// place through their strides, and the launch shape.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace rlm::scan {

/// Threads per block: small blocks, so that at B·N of a few tens of thousands more SMs get one.
constexpr int kChannelThreads = 128;

/// Blocks covering `batch` × `n` channels, one thread each.
inline int64_t channel_thread_blocks(int64_t batch, int64_t n) {
  return (batch * n + kChannelThreads - 1) / kChannelThreads;
}

/// A [T, B, N] tensor whose channel stride is 1 (any time and batch strides, 0 for broadcasts), as Rows.
template <class S>
struct DeviceRows {
  const S* data;
  int64_t stride_t, stride_b;
  __device__ S at(int64_t t, int64_t b, int64_t c) const { return data[t * stride_t + b * stride_b + c]; }
};

/// Null data for an undefined tensor.
template <class S>
DeviceRows<S> device_rows(const at::Tensor& x) {
  if (!x.defined()) return {nullptr, 0, 0};
  return {x.data_ptr<S>(), x.stride(0), x.stride(1)};
}

template <class S>
S* data_or_null(const at::Tensor& t) {
  return t.defined() ? t.data_ptr<S>() : nullptr;
}

}  // namespace rlm::scan
