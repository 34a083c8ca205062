// Helpers for the fused CPU ops that walk time over [T, B, N] tensors (kf_scan_cpu.cpp, the spiking cell's
// spiking_highway.cpp): work units of one batch entry and a block of channels, rows read in place through their
// strides, and per-row facts turned into template flags so that the channel loops vectorise.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <type_traits>

namespace rlm::scan {

/// Channels per work unit: the inner loop over them is contiguous in every tensor.
constexpr int64_t kChannelBlock = 256;

/// Rows of a [T, B, N] tensor whose channel stride is 1 (any time and batch strides, 0 for broadcasts).
template <class S>
struct Rows {
  const S* data;
  int64_t stride_t, stride_b;
  const S* at(int64_t t, int64_t b) const { return data + t * stride_t + b * stride_b; }
};

template <class S>
Rows<S> rows_of(const torch::Tensor& x) {
  return {x.data_ptr<S>(), x.stride(0), x.stride(1)};
}

/// Channel stride 1: x itself (split views and expands of [N] or [B, 1, N] tensors pass as they are), else a copy.
inline torch::Tensor unit_channel_stride(const torch::Tensor& x) { return x.stride(2) == 1 ? x : x.contiguous(); }

/// Calls body with each flag as a std::bool_constant, so that body can pick a template instance: a fact fixed for a
/// whole row (a reset, an absent gradient) then costs no branch inside the channel loop, which GCC 12 would not
/// vectorise.
template <class Body>
void with_flags(Body&& body, bool flag) {
  if (flag)
    body(std::true_type{});
  else
    body(std::false_type{});
}
template <class Body, class... More>
void with_flags(Body&& body, bool flag, More... more) {
  with_flags([&](auto... known) { with_flags([&](auto first) { body(first, known...); }, flag); }, more...);
}

}  // namespace rlm::scan
