// Helpers for the fused CPU ops that walk time over [T, B, N] tensors (kf_filter.cpp, the spiking cell's
// spiking_highway.cpp): work units of one batch entry and a block of channels, rows read in place through their
// strides, and per-row facts turned into template flags so that the channel loops vectorise.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace rlm::scan {

/// Channels per work unit: the inner loop over them is contiguous in every tensor, and the blocks give every thread
/// a unit even at batch 1.
constexpr int64_t kChannelBlock = 256;

/// A work unit: batch entry b and channels [c0, c0 + width), walking time.
struct ChannelBlock {
  int64_t b, c0, width;
};

/// How many units cover `batch` entries of `n` channels.
inline int64_t channel_block_units(int64_t batch, int64_t n) {
  return batch * ((n + kChannelBlock - 1) / kChannelBlock);
}

/// Unit `unit` of the channel_block_units(batch, n) units.
inline ChannelBlock channel_block(int64_t unit, int64_t n) {
  const int64_t blocks = (n + kChannelBlock - 1) / kChannelBlock;
  const int64_t c0 = (unit % blocks) * kChannelBlock;
  return {unit / blocks, c0, std::min(n, c0 + kChannelBlock) - c0};
}

/// at::parallel_for's grain for units walking `steps` steps: about 64k element updates per task, so that short
/// sequences (acting, T = 1) are not split into tasks too small to pay for waking a thread.
inline int64_t channel_block_grain(int64_t steps) {
  return std::max<int64_t>(1, (64 * 1024) / std::max<int64_t>(1, steps * kChannelBlock));
}

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
