#include "memory/spiking_highway.hpp"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "memory/spiking_highway_kernels.hpp"
#include "memory/spiking_highway_step.hpp"
#include "scan/channel_rows.hpp"
#include "scan/fused_ops_device.hpp"
#include "scan/linear_scan.hpp"

namespace rlm::memory {
namespace {

using scan::channel_block;
using scan::channel_block_grain;
using scan::channel_block_units;
using scan::ChannelBlock;
using scan::kChannelBlock;
using scan::Rows;
using scan::rows_of;
using scan::unit_channel_stride;
using scan::with_flags;

using Inputs = SpikingHighwayInputs;

// One time step of one block of channels (the per-channel arithmetic in spiking_highway_step.hpp). The channel loops
// live in functions of their own, with __restrict pointers and the per-row facts (a reset, which gradients exist) as
// template flags (with_flags): written inline, with runtime conditions and pointers the compiler must assume alias,
// GCC 12 vectorises neither loop.
template <class S, bool kCut>
void forward_row(const S* __restrict xr, const S* __restrict xi, const S* __restrict cr, const S* __restrict ci,
                 const S* __restrict si, const S* __restrict so, const S* __restrict prev, S* __restrict h,
                 S* __restrict y_re, S* __restrict y_im, int64_t width) {
  for (int64_t c = 0; c < width; ++c) {
    const auto step = highway_step(xr[c], xi[c], cr[c], ci[c], si[c], so[c], kCut ? S(0) : prev[2 * c],
                                   kCut ? S(0) : prev[2 * c + 1]);
    h[2 * c] = step.h_re;
    h[2 * c + 1] = step.h_im;
    y_re[c] = step.y_re;
    y_im[c] = step.y_im;
  }
}

// g (in/out): the adjoint of h_t on entry (from step t + 1), of h_{t−1} on exit. gy_re/gy_im: ∂L/∂ŷ_t (absent unless
// kHasGy), gh: ∂L/∂h_t from the `hidden` output (absent unless kHasGh).
template <class S, bool kCut, bool kHasGy, bool kHasGh>
void backward_row(const S* __restrict xr, const S* __restrict xi, const S* __restrict cr, const S* __restrict ci,
                  const S* __restrict si, const S* __restrict so, const S* __restrict h, const S* __restrict prev,
                  const S* __restrict gy_re, const S* __restrict gy_im, const S* __restrict gh, S* __restrict g,
                  S* __restrict d_wx_re, S* __restrict d_wx_im, S* __restrict d_c_re, S* __restrict d_c_im,
                  S* __restrict d_s_in, S* __restrict d_s_out, int64_t width) {
  for (int64_t c = 0; c < width; ++c) {
    const auto d = highway_step_adjoint(xr[c], xi[c], cr[c], ci[c], si[c], so[c], h[2 * c], h[2 * c + 1],
                                        kCut ? S(0) : prev[2 * c], kCut ? S(0) : prev[2 * c + 1],
                                        kHasGy ? gy_re[c] : S(0), kHasGy ? gy_im[c] : S(0), kHasGh ? gh[2 * c] : S(0),
                                        kHasGh ? gh[2 * c + 1] : S(0), g[2 * c], g[2 * c + 1], kCut);
    d_wx_re[c] = d.d_wx_re;
    d_wx_im[c] = d.d_wx_im;
    d_c_re[c] = d.d_c_re;
    d_c_im[c] = d.d_c_im;
    d_s_in[c] = d.d_s_in;
    d_s_out[c] = d.d_s_out;
    g[2 * c] = d.g_re;
    g[2 * c + 1] = d.g_im;
  }
}

template <class S>
void forward_cpu(const Inputs& in, S* y_hat, S* hidden) {
  const int64_t steps = in.s_in.size(0), batch = in.s_in.size(1), n = in.s_in.size(2);
  const auto wx_re = rows_of<S>(in.wx_re), wx_im = rows_of<S>(in.wx_im), c_re = rows_of<S>(in.c_re),
             c_im = rows_of<S>(in.c_im), s_in = rows_of<S>(in.s_in), s_out = rows_of<S>(in.s_out);
  const S* h0 = in.h0.data_ptr<S>();
  const bool* starts = in.starts.defined() ? in.starts.data_ptr<bool>() : nullptr;
  const int64_t units = channel_block_units(batch, n);
  at::parallel_for(0, units, channel_block_grain(steps), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const auto [b, c0, width] = channel_block(unit, n);
      const S* prev = h0 + (b * n + c0) * 2;
      for (int64_t t = 0; t < steps; ++t) {
        const bool cut = starts != nullptr && starts[t * batch + b];
        const S *xr = wx_re.at(t, b) + c0, *xi = wx_im.at(t, b) + c0, *cr = c_re.at(t, b) + c0,
                *ci = c_im.at(t, b) + c0, *si = s_in.at(t, b) + c0, *so = s_out.at(t, b) + c0;
        S* h = hidden + ((t * batch + b) * n + c0) * 2;
        S* y = y_hat + (t * batch + b) * 2 * n + c0;
        (cut ? forward_row<S, true> : forward_row<S, false>)(xr, xi, cr, ci, si, so, prev, h, y, y + n, width);
        prev = h;
      }
    }
  });
}

struct Grads {
  torch::Tensor wx_re, wx_im, c_re, c_im, s_in, s_out, h0;
};

// Reverse pass. g is ∂L/∂h_t (complex, as (Re, Im)), gathered from ŷ_t, from `hidden` itself and from step t + 1:
//   ∂b = g, ∂a = g · conj(h_{t−1}), and g carried to h_{t−1} is conj(a_t) · g (0 across a start).
template <class S>
void backward_cpu(const Inputs& in, const S* hidden, const S* grad_y, const S* grad_hidden, Grads& out) {
  const int64_t steps = in.s_in.size(0), batch = in.s_in.size(1), n = in.s_in.size(2);
  const auto wx_re = rows_of<S>(in.wx_re), wx_im = rows_of<S>(in.wx_im), c_re = rows_of<S>(in.c_re),
             c_im = rows_of<S>(in.c_im), s_in = rows_of<S>(in.s_in), s_out = rows_of<S>(in.s_out);
  const S* h0 = in.h0.data_ptr<S>();
  const bool* starts = in.starts.defined() ? in.starts.data_ptr<bool>() : nullptr;
  S *d_wx_re = out.wx_re.data_ptr<S>(), *d_wx_im = out.wx_im.data_ptr<S>(), *d_c_re = out.c_re.data_ptr<S>(),
    *d_c_im = out.c_im.data_ptr<S>(), *d_s_in = out.s_in.data_ptr<S>(), *d_s_out = out.s_out.data_ptr<S>(),
    *d_h0 = out.h0.data_ptr<S>();
  const int64_t units = channel_block_units(batch, n);
  at::parallel_for(0, units, channel_block_grain(steps), [&](int64_t begin, int64_t end) {
    std::vector<S> adjoint(static_cast<size_t>(2 * kChannelBlock));
    for (int64_t unit = begin; unit < end; ++unit) {
      const ChannelBlock block = channel_block(unit, n);
      // Named copies, not a structured binding: the lambda below captures them, which clang before 16 rejects.
      const int64_t b = block.b, c0 = block.c0, width = block.width;
      S* g = adjoint.data();
      std::fill(g, g + 2 * width, S(0));
      for (int64_t t = steps - 1; t >= 0; --t) {
        const bool cut = starts != nullptr && starts[t * batch + b];
        const S *xr = wx_re.at(t, b) + c0, *xi = wx_im.at(t, b) + c0, *cr = c_re.at(t, b) + c0,
                *ci = c_im.at(t, b) + c0, *si = s_in.at(t, b) + c0, *so = s_out.at(t, b) + c0;
        const int64_t row = (t * batch + b) * n + c0;
        const S* h = hidden + row * 2;
        const S* prev = t == 0 ? h0 + (b * n + c0) * 2 : hidden + (row - batch * n) * 2;
        const S* gy = grad_y != nullptr ? grad_y + (t * batch + b) * 2 * n + c0 : nullptr;  // Re, then Im at + n
        const S* gh = grad_hidden != nullptr ? grad_hidden + row * 2 : nullptr;
        const auto row_grads = [&](auto cut_flag, auto has_gy, auto has_gh) {
          backward_row<S, cut_flag(), has_gy(), has_gh()>(
              xr, xi, cr, ci, si, so, h, prev, gy, has_gy() ? gy + n : nullptr, gh, g, d_wx_re + row, d_wx_im + row,
              d_c_re + row, d_c_im + row, d_s_in + row, d_s_out + row, width);
        };
        with_flags(row_grads, cut, gy != nullptr, gh != nullptr);
      }
      std::copy(g, g + 2 * width, d_h0 + (b * n + c0) * 2);
    }
  });
}

class SpikingHighwayFunction : public torch::autograd::Function<SpikingHighwayFunction> {
 public:
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& wx_re,
                                              const torch::Tensor& wx_im, const torch::Tensor& c_re,
                                              const torch::Tensor& c_im, const torch::Tensor& s_in,
                                              const torch::Tensor& s_out, const torch::Tensor& h0,
                                              const torch::Tensor& resets) {
    const Inputs in{unit_channel_stride(wx_re),
                    unit_channel_stride(wx_im),
                    unit_channel_stride(c_re),
                    unit_channel_stride(c_im),
                    unit_channel_stride(s_in),
                    unit_channel_stride(s_out),
                    h0.contiguous(),
                    resets.numel() > 0 ? resets.contiguous() : torch::Tensor()};
    const int64_t steps = s_in.size(0), batch = s_in.size(1), n = s_in.size(2);
    auto y_hat = torch::empty({steps, batch, 2 * n}, s_in.options());
    auto hidden = torch::empty({steps, batch, n, 2}, s_in.options());
    if (s_in.is_cuda()) {
      spiking_highway_cuda_forward(in, y_hat, hidden);
    } else {
      AT_DISPATCH_FLOATING_TYPES(s_in.scalar_type(), "spiking_highway_forward", [&] {
        forward_cpu<scalar_t>(in, y_hat.data_ptr<scalar_t>(), hidden.data_ptr<scalar_t>());
      });
    }
    ctx->save_for_backward({in.wx_re, in.wx_im, in.c_re, in.c_im, in.s_in, in.s_out, in.h0, hidden});
    ctx->saved_data["has_starts"] = in.starts.defined();
    if (in.starts.defined()) ctx->saved_data["starts"] = in.starts;
    return {y_hat, hidden};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    Inputs in{saved[0], saved[1], saved[2], saved[3], saved[4], saved[5], saved[6], torch::Tensor()};
    if (ctx->saved_data["has_starts"].toBool()) in.starts = ctx->saved_data["starts"].toTensor();
    const torch::Tensor& hidden = saved[7];
    const auto grad_y = grads[0].defined() ? grads[0].contiguous() : torch::Tensor();
    const auto grad_hidden = grads[1].defined() ? grads[1].contiguous() : torch::Tensor();
    const auto like = [&] { return torch::empty(in.s_in.sizes(), in.s_in.options()); };
    Grads out{like(), like(), like(), like(), like(), like(), torch::empty_like(in.h0)};
    if (hidden.is_cuda()) {
      spiking_highway_cuda_backward(in, hidden, grad_y, grad_hidden, out.wx_re, out.wx_im, out.c_re, out.c_im, out.s_in,
                                    out.s_out, out.h0);
    } else {
      AT_DISPATCH_FLOATING_TYPES(hidden.scalar_type(), "spiking_highway_backward", [&] {
        backward_cpu<scalar_t>(in, hidden.data_ptr<scalar_t>(),
                               grad_y.defined() ? grad_y.data_ptr<scalar_t>() : nullptr,
                               grad_hidden.defined() ? grad_hidden.data_ptr<scalar_t>() : nullptr, out);
      });
    }
    return {out.wx_re, out.wx_im, out.c_re, out.c_im, out.s_in, out.s_out, out.h0, torch::Tensor()};
  }
};

}  // namespace

SpikingHighwayOutput spiking_highway(const torch::Tensor& wx_re, const torch::Tensor& wx_im, const torch::Tensor& c_re,
                                     const torch::Tensor& c_im, const torch::Tensor& s_in, const torch::Tensor& s_out,
                                     const torch::Tensor& h0, const torch::Tensor& starts) {
  TORCH_CHECK(s_in.dim() == 3, "spiking_highway: s_in must be [T, B, N], got ", s_in.sizes());
  for (const auto* x : {&wx_re, &wx_im, &c_re, &c_im, &s_out}) {
    TORCH_CHECK(x->sizes() == s_in.sizes(), "spiking_highway: every [T, B, N] input must have the shape ", s_in.sizes(),
                ", got ", x->sizes());
    TORCH_CHECK(x->scalar_type() == s_in.scalar_type() && x->device() == s_in.device(),
                "spiking_highway: inputs must share one dtype and device");
  }
  TORCH_CHECK(scan::fused_ops_run_on(s_in.device()),
              "spiking_highway: CPU, or CUDA in a build with its kernels (use spiking_highway_reference elsewhere)");
  TORCH_CHECK(s_in.scalar_type() == torch::kFloat32 || s_in.scalar_type() == torch::kFloat64,
              "spiking_highway: dtype must be float32 or float64");
  TORCH_CHECK(h0.dim() == 3 && h0.size(0) == s_in.size(1) && h0.size(1) == s_in.size(2) && h0.size(2) == 2,
              "spiking_highway: h0 must be [B, N, 2], got ", h0.sizes());
  TORCH_CHECK(starts.scalar_type() == torch::kBool && starts.dim() == 2 && starts.size(0) == s_in.size(0) &&
                  starts.size(1) == s_in.size(1),
              "spiking_highway: starts must be bool [T, B]");
  const auto out = SpikingHighwayFunction::apply(wx_re, wx_im, c_re, c_im, s_in, s_out, h0.to(s_in.scalar_type()),
                                                 starts.to(s_in.device()));
  return {out[0], out[1]};
}

SpikingHighwayOutput spiking_highway_reference(const torch::Tensor& wx_re, const torch::Tensor& wx_im,
                                               const torch::Tensor& c_re, const torch::Tensor& c_im,
                                               const torch::Tensor& s_in, const torch::Tensor& s_out,
                                               const torch::Tensor& h0, const torch::Tensor& starts) {
  const auto keep = 1 - s_in;
  const auto a = torch::complex(c_re * s_in + keep, c_im * s_in);
  const auto b = torch::complex(wx_re * s_in, wx_im * s_in);
  const auto h0_complex = torch::view_as_complex(h0.to(s_in.scalar_type()).contiguous());
  const auto hidden = scan::linear_scan(a, b, h0_complex, starts.to(s_in.device(), torch::kBool));
  const auto pass = 1 - s_out;
  const auto y_re = s_out * torch::real(hidden) + pass * wx_re;
  const auto y_im = s_out * torch::imag(hidden) + pass * wx_im;
  return {torch::cat({y_re, y_im}, -1), torch::view_as_real(hidden)};
}

#ifndef RLM_HAVE_CUDA
void spiking_highway_cuda_forward(const SpikingHighwayInputs&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "spiking_highway: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}

void spiking_highway_cuda_backward(const SpikingHighwayInputs&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                   at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&,
                                   at::Tensor&) {
  TORCH_CHECK(false, "spiking_highway: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
#endif

}  // namespace rlm::memory
