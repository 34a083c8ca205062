// CUDA passes of the KF layer's fused filter (kf_filter_kernels.hpp): the CPU passes of kf_filter.cpp, with the same
// per-step arithmetic (kf_step.hpp), as one thread per (batch entry, channel) walking time, the channel fastest so that
// a warp's loads and stores are coalesced. Forward is the filter (KF paper Eqs. 4–6, diagonal, C = I); backward its
// adjoint in reverse, the priors and gains recomputed from the saved posteriors. Where the Hillis–Steele scan made
// ⌈log2 T⌉ rounds of about twenty whole-tensor ops each way (and kept their intermediates for backward), this is one
// kernel each way of O(T) work.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "scan/channel_rows_cuda.hpp"
#include "scan/kf_filter_kernels.hpp"
#include "scan/kf_step.hpp"

namespace rlm::scan {
namespace {

template <class S>
struct Params {
  DeviceRows<S> a, bu, q, w, r;
  const S *m0, *p0;
  const bool *starts, *pad;
  S reset_mean, reset_var;
  int64_t steps, batch, n;
};

template <class S>
Params<S> params_of(const KfFilterInputs& in) {
  return {device_rows<S>(in.a),
          device_rows<S>(in.bu),
          device_rows<S>(in.q),
          device_rows<S>(in.w),
          device_rows<S>(in.r),
          in.m0.data_ptr<S>(),
          in.p0.data_ptr<S>(),
          in.starts.defined() ? in.starts.data_ptr<bool>() : nullptr,
          in.pad.defined() ? in.pad.data_ptr<bool>() : nullptr,
          static_cast<S>(in.reset_mean),
          static_cast<S>(in.reset_var),
          in.w.size(0),
          in.w.size(1),
          in.w.size(2)};
}

template <class S>
__global__ void kf_forward_kernel(Params<S> p, S* __restrict__ mean, S* __restrict__ var) {
  const int64_t channel = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (channel >= p.batch * p.n) return;
  const int64_t b = channel / p.n, c = channel % p.n;
  S m = p.m0[channel], v = p.p0[channel];
  for (int64_t t = 0; t < p.steps; ++t) {
    const int64_t row = (t * p.batch + b) * p.n + c;
    const int64_t flag = t * p.batch + b;
    if (p.pad == nullptr || !p.pad[flag]) {  // a padded step repeats the belief, its start flag included
      const bool reset = p.starts != nullptr && p.starts[flag];
      const auto post = kf_step(p.a.at(t, b, c), p.bu.data != nullptr ? p.bu.at(t, b, c) : S(0), p.q.at(t, b, c),
                                p.w.at(t, b, c), p.r.at(t, b, c), reset ? p.reset_mean : m, reset ? p.reset_var : v);
      m = post.mean;
      v = post.var;
    }
    mean[row] = m;
    var[row] = v;
  }
}

template <class S>
struct Grads {
  const S *grad_mean, *grad_var;                  // may be null
  S *d_a, *d_bu, *d_q, *d_w, *d_r, *d_m0, *d_p0;  // d_bu null without input
};

// The adjoint in reverse (kf_step_adjoint), g_m, g_p carrying ∂L/∂ of the belief.
template <class S>
__global__ void kf_backward_kernel(Params<S> p, const S* __restrict__ mean, const S* __restrict__ var, Grads<S> g) {
  const int64_t channel = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (channel >= p.batch * p.n) return;
  const int64_t b = channel / p.n, c = channel % p.n, stride = p.batch * p.n;
  S g_m = 0, g_p = 0;
  for (int64_t t = p.steps - 1; t >= 0; --t) {
    const int64_t row = (t * p.batch + b) * p.n + c;
    const int64_t flag = t * p.batch + b;
    if (g.grad_mean != nullptr) g_m += g.grad_mean[row];
    if (g.grad_var != nullptr) g_p += g.grad_var[row];
    if (p.pad != nullptr && p.pad[flag]) {  // the belief passes through unchanged, and so does its adjoint
      g.d_a[row] = g.d_q[row] = g.d_w[row] = g.d_r[row] = 0;
      if (g.d_bu != nullptr) g.d_bu[row] = 0;
      continue;
    }
    const bool reset = p.starts != nullptr && p.starts[flag];
    const S m_prev = reset ? p.reset_mean : (t == 0 ? p.m0[channel] : mean[row - stride]);
    const S p_prev = reset ? p.reset_var : (t == 0 ? p.p0[channel] : var[row - stride]);
    const auto d = kf_step_adjoint(p.a.at(t, b, c), p.bu.data != nullptr ? p.bu.at(t, b, c) : S(0), p.q.at(t, b, c),
                                   p.w.at(t, b, c), p.r.at(t, b, c), m_prev, p_prev, g_m, g_p, reset);
    g.d_w[row] = d.d_w;
    g.d_r[row] = d.d_r;
    if (g.d_bu != nullptr) g.d_bu[row] = d.d_bu;
    g.d_q[row] = d.d_q;
    g.d_a[row] = d.d_a;
    g_m = d.g_m;
    g_p = d.g_p;
  }
  g.d_m0[channel] = g_m;
  g.d_p0[channel] = g_p;
}

}  // namespace

void kf_filter_cuda_forward(const KfFilterInputs& in, at::Tensor& mean, at::Tensor& var) {
  const c10::cuda::CUDAGuard guard(in.w.device());
  if (in.w.numel() == 0) return;
  AT_DISPATCH_FLOATING_TYPES(in.w.scalar_type(), "kf_filter_cuda_forward", [&] {
    kf_forward_kernel<scalar_t>
        <<<channel_thread_blocks(in.w.size(1), in.w.size(2)), kChannelThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
            params_of<scalar_t>(in), mean.data_ptr<scalar_t>(), var.data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void kf_filter_cuda_backward(const KfFilterInputs& in, const at::Tensor& mean, const at::Tensor& var,
                             const at::Tensor& grad_mean, const at::Tensor& grad_var, at::Tensor& d_a, at::Tensor& d_bu,
                             at::Tensor& d_q, at::Tensor& d_w, at::Tensor& d_r, at::Tensor& d_m0, at::Tensor& d_p0) {
  const c10::cuda::CUDAGuard guard(in.w.device());
  if (in.w.size(1) * in.w.size(2) == 0) return;
  AT_DISPATCH_FLOATING_TYPES(in.w.scalar_type(), "kf_filter_cuda_backward", [&] {
    const Grads<scalar_t> grads{
        data_or_null<scalar_t>(grad_mean), data_or_null<scalar_t>(grad_var), d_a.data_ptr<scalar_t>(),
        data_or_null<scalar_t>(d_bu),      d_q.data_ptr<scalar_t>(),         d_w.data_ptr<scalar_t>(),
        d_r.data_ptr<scalar_t>(),          d_m0.data_ptr<scalar_t>(),        d_p0.data_ptr<scalar_t>()};
    kf_backward_kernel<scalar_t>
        <<<channel_thread_blocks(in.w.size(1), in.w.size(2)), kChannelThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
            params_of<scalar_t>(in), mean.data_ptr<scalar_t>(), var.data_ptr<scalar_t>(), grads);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace rlm::scan
