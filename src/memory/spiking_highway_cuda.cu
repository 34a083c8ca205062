// CUDA passes of the spiking cell's fused highways (spiking_highway_kernels.hpp): the CPU rows of spiking_highway.cpp,
// with the same per-step arithmetic (spiking_highway_step.hpp), as one thread per (batch entry, channel) walking time,
// the channel fastest so that a warp's loads and stores are coalesced. Where the whole-tensor form made about twenty
// ops and a complex linear_scan each way (their intermediates kept for backward), this is one kernel each way.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "memory/spiking_highway_kernels.hpp"
#include "memory/spiking_highway_step.hpp"
#include "scan/channel_rows_cuda.hpp"

namespace rlm::memory {
namespace {

using scan::channel_thread_blocks;
using scan::data_or_null;
using scan::device_rows;
using scan::DeviceRows;
using scan::kChannelThreads;

template <class S>
struct Params {
  DeviceRows<S> wx_re, wx_im, c_re, c_im, s_in, s_out;
  const S* h0;
  const bool* starts;  // may be null
  int64_t steps, batch, n;
};

template <class S>
Params<S> params_of(const SpikingHighwayInputs& in) {
  return {device_rows<S>(in.wx_re), device_rows<S>(in.wx_im),
          device_rows<S>(in.c_re),  device_rows<S>(in.c_im),
          device_rows<S>(in.s_in),  device_rows<S>(in.s_out),
          in.h0.data_ptr<S>(),      in.starts.defined() ? in.starts.data_ptr<bool>() : nullptr,
          in.s_in.size(0),          in.s_in.size(1),
          in.s_in.size(2)};
}

// Forward (highway_step): h_t = a_t h_{t−1} + b_t, ŷ_t.
template <class S>
__global__ void highway_forward_kernel(Params<S> p, S* __restrict__ y_hat, S* __restrict__ hidden) {
  const int64_t channel = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (channel >= p.batch * p.n) return;
  const int64_t b = channel / p.n, c = channel % p.n;
  S h_re = p.h0[2 * channel], h_im = p.h0[2 * channel + 1];
  for (int64_t t = 0; t < p.steps; ++t) {
    const bool cut = p.starts != nullptr && p.starts[t * p.batch + b];
    const auto step = highway_step(p.wx_re.at(t, b, c), p.wx_im.at(t, b, c), p.c_re.at(t, b, c), p.c_im.at(t, b, c),
                                   p.s_in.at(t, b, c), p.s_out.at(t, b, c), cut ? S(0) : h_re, cut ? S(0) : h_im);
    h_re = step.h_re;
    h_im = step.h_im;
    const int64_t row = (t * p.batch + b) * p.n + c;
    hidden[2 * row] = h_re;
    hidden[2 * row + 1] = h_im;
    const int64_t y = (t * p.batch + b) * 2 * p.n + c;
    y_hat[y] = step.y_re;
    y_hat[y + p.n] = step.y_im;
  }
}

template <class S>
struct Grads {
  const S *grad_y, *grad_hidden;  // may be null
  S *d_wx_re, *d_wx_im, *d_c_re, *d_c_im, *d_s_in, *d_s_out, *d_h0;
};

// Reverse pass (highway_step_adjoint), carrying ∂L/∂h back through time.
template <class S>
__global__ void highway_backward_kernel(Params<S> p, const S* __restrict__ hidden, Grads<S> d) {
  const int64_t channel = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (channel >= p.batch * p.n) return;
  const int64_t b = channel / p.n, c = channel % p.n;
  S carried_re = 0, carried_im = 0;
  for (int64_t t = p.steps - 1; t >= 0; --t) {
    const bool cut = p.starts != nullptr && p.starts[t * p.batch + b];
    const int64_t row = (t * p.batch + b) * p.n + c;
    const int64_t y = (t * p.batch + b) * 2 * p.n + c;
    const int64_t prev = row - p.batch * p.n;  // h_{t−1}: hidden at t − 1, or h0 at t = 0
    const S prev_re = cut ? S(0) : (t == 0 ? p.h0[2 * channel] : hidden[2 * prev]);
    const S prev_im = cut ? S(0) : (t == 0 ? p.h0[2 * channel + 1] : hidden[2 * prev + 1]);
    const bool has_gy = d.grad_y != nullptr, has_gh = d.grad_hidden != nullptr;
    const auto g = highway_step_adjoint(p.wx_re.at(t, b, c), p.wx_im.at(t, b, c), p.c_re.at(t, b, c),
                                        p.c_im.at(t, b, c), p.s_in.at(t, b, c), p.s_out.at(t, b, c), hidden[2 * row],
                                        hidden[2 * row + 1], prev_re, prev_im, has_gy ? d.grad_y[y] : S(0),
                                        has_gy ? d.grad_y[y + p.n] : S(0), has_gh ? d.grad_hidden[2 * row] : S(0),
                                        has_gh ? d.grad_hidden[2 * row + 1] : S(0), carried_re, carried_im, cut);
    d.d_wx_re[row] = g.d_wx_re;
    d.d_wx_im[row] = g.d_wx_im;
    d.d_c_re[row] = g.d_c_re;
    d.d_c_im[row] = g.d_c_im;
    d.d_s_in[row] = g.d_s_in;
    d.d_s_out[row] = g.d_s_out;
    carried_re = g.g_re;
    carried_im = g.g_im;
  }
  d.d_h0[2 * channel] = carried_re;
  d.d_h0[2 * channel + 1] = carried_im;
}

}  // namespace

void spiking_highway_cuda_forward(const SpikingHighwayInputs& in, at::Tensor& y_hat, at::Tensor& hidden) {
  const c10::cuda::CUDAGuard guard(in.s_in.device());
  if (in.s_in.size(1) * in.s_in.size(2) == 0) return;
  AT_DISPATCH_FLOATING_TYPES(in.s_in.scalar_type(), "spiking_highway_cuda_forward", [&] {
    highway_forward_kernel<scalar_t><<<channel_thread_blocks(in.s_in.size(1), in.s_in.size(2)), kChannelThreads, 0,
                                       at::cuda::getCurrentCUDAStream()>>>(
        params_of<scalar_t>(in), y_hat.data_ptr<scalar_t>(), hidden.data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void spiking_highway_cuda_backward(const SpikingHighwayInputs& in, const at::Tensor& hidden, const at::Tensor& grad_y,
                                   const at::Tensor& grad_hidden, at::Tensor& d_wx_re, at::Tensor& d_wx_im,
                                   at::Tensor& d_c_re, at::Tensor& d_c_im, at::Tensor& d_s_in, at::Tensor& d_s_out,
                                   at::Tensor& d_h0) {
  const c10::cuda::CUDAGuard guard(in.s_in.device());
  if (in.s_in.size(1) * in.s_in.size(2) == 0) return;
  AT_DISPATCH_FLOATING_TYPES(in.s_in.scalar_type(), "spiking_highway_cuda_backward", [&] {
    const Grads<scalar_t> grads{
        data_or_null<scalar_t>(grad_y), data_or_null<scalar_t>(grad_hidden), d_wx_re.data_ptr<scalar_t>(),
        d_wx_im.data_ptr<scalar_t>(),   d_c_re.data_ptr<scalar_t>(),         d_c_im.data_ptr<scalar_t>(),
        d_s_in.data_ptr<scalar_t>(),    d_s_out.data_ptr<scalar_t>(),        d_h0.data_ptr<scalar_t>()};
    highway_backward_kernel<scalar_t>
        <<<channel_thread_blocks(in.s_in.size(1), in.s_in.size(2)), kChannelThreads, 0,
           at::cuda::getCurrentCUDAStream()>>>(params_of<scalar_t>(in), hidden.data_ptr<scalar_t>(), grads);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace rlm::memory
