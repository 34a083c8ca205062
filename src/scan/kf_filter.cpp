// kf_scan's fused filter: the Kalman filter run forward in time as one autograd op (see kf_scan.hpp). The associative
// scan exists for parallel hardware; on a CPU with a few cores, B·N independent filters already fill every core, and
// the sequential recursion does O(T) work in one pass where Hillis–Steele does O(T log T) whole-tensor passes and
// keeps their intermediates for backward. On a GPU too, at the KF layer's B·N of thousands of channels and T of tens
// to a thousand steps, one thread per channel walking time (kf_filter_cuda.cu) makes one kernel each way where the
// scan made hundreds. Backward is the recursion's adjoint, run in reverse from the saved posteriors (the priors and
// gains are recomputed per step).
#include "scan/kf_filter.hpp"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <vector>

#include "scan/channel_rows.hpp"
#include "scan/kf_filter_kernels.hpp"
#include "scan/kf_step.hpp"

namespace rlm::scan {
namespace {

// The channel loops are functions of their own with __restrict pointers and the per-row facts as template flags,
// so that GCC vectorises them (with_flags in channel_rows.hpp).

// One step: from the belief (m, p) before it (the reset belief where kReset) to the posterior (x⁺, P⁺).
template <class S, bool kReset, bool kHasInput>
void forward_row(const S* __restrict a, const S* __restrict bu, const S* __restrict q, const S* __restrict w,
                 const S* __restrict r, const S* __restrict m, const S* __restrict p, S reset_mean, S reset_var,
                 S* __restrict mean_out, S* __restrict var_out, int64_t width) {
  for (int64_t c = 0; c < width; ++c) {
    const auto post = kf_step(a[c], kHasInput ? bu[c] : S(0), q[c], w[c], r[c], kReset ? reset_mean : m[c],
                              kReset ? reset_var : p[c]);
    mean_out[c] = post.mean;
    var_out[c] = post.var;
  }
}

// The adjoint of forward_row. g_m, g_p (in/out): on entry ∂L/∂x⁺, ∂L/∂P⁺ of this step (everything that reaches them),
// on exit ∂L/∂ of the belief before it (zero where kReset: the reset belief is a constant).
template <class S, bool kReset, bool kHasInput>
void backward_row(const S* __restrict a, const S* __restrict bu, const S* __restrict q, const S* __restrict w,
                  const S* __restrict r, const S* __restrict m, const S* __restrict p, S reset_mean, S reset_var,
                  S* __restrict g_m, S* __restrict g_p, S* __restrict d_a, S* __restrict d_bu, S* __restrict d_q,
                  S* __restrict d_w, S* __restrict d_r, int64_t width) {
  for (int64_t c = 0; c < width; ++c) {
    const auto d = kf_step_adjoint(a[c], kHasInput ? bu[c] : S(0), q[c], w[c], r[c], kReset ? reset_mean : m[c],
                                   kReset ? reset_var : p[c], g_m[c], g_p[c], kReset);
    d_w[c] = d.d_w;
    d_r[c] = d.d_r;
    if constexpr (kHasInput) d_bu[c] = d.d_bu;
    d_q[c] = d.d_q;
    d_a[c] = d.d_a;
    g_m[c] = d.g_m;
    g_p[c] = d.g_p;
  }
}

using Inputs = KfFilterInputs;

// The inputs as raw rows and flags, for the loops of forward_cpu and backward_cpu.
template <class S>
struct View {
  explicit View(const Inputs& in)
      : steps(in.w.size(0)),
        batch(in.w.size(1)),
        n(in.w.size(2)),
        has_input(in.bu.defined()),
        a(rows_of<S>(in.a)),
        bu(has_input ? rows_of<S>(in.bu) : Rows<S>{nullptr, 0, 0}),
        q(rows_of<S>(in.q)),
        w(rows_of<S>(in.w)),
        r(rows_of<S>(in.r)),
        m0(in.m0.data_ptr<S>()),
        p0(in.p0.data_ptr<S>()),
        starts(in.starts.defined() ? in.starts.data_ptr<bool>() : nullptr),
        pad(in.pad.defined() ? in.pad.data_ptr<bool>() : nullptr),
        reset_mean(static_cast<S>(in.reset_mean)),
        reset_var(static_cast<S>(in.reset_var)) {}

  bool is_reset(int64_t t, int64_t b) const { return starts != nullptr && starts[t * batch + b]; }
  bool is_pad(int64_t t, int64_t b) const { return pad != nullptr && pad[t * batch + b]; }

  int64_t steps, batch, n;
  bool has_input;
  Rows<S> a, bu, q, w, r;
  const S *m0, *p0;
  const bool *starts, *pad;
  S reset_mean, reset_var;
};

template <class S>
void forward_cpu(const Inputs& in, S* mean, S* var) {
  const View<S> v(in);
  const int64_t steps = v.steps, batch = v.batch, n = v.n;
  const int64_t units = channel_block_units(batch, n);
  at::parallel_for(0, units, channel_block_grain(steps), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const ChannelBlock block = channel_block(unit, n);
      // Named copies, not a structured binding: the lambda below captures them, which clang before 16 rejects.
      const int64_t b = block.b, c0 = block.c0, width = block.width;
      const S* m = v.m0 + b * n + c0;
      const S* p = v.p0 + b * n + c0;
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = (t * batch + b) * n + c0;
        S* mean_out = mean + row;
        S* var_out = var + row;
        if (v.is_pad(t, b)) {  // a padded step repeats the belief, its start flag included
          std::copy(m, m + width, mean_out);
          std::copy(p, p + width, var_out);
        } else {
          const S* bu_row = v.has_input ? v.bu.at(t, b) + c0 : nullptr;
          with_flags(
              [&](auto kReset, auto kHasInput) {
                forward_row<S, kReset(), kHasInput()>(v.a.at(t, b) + c0, bu_row, v.q.at(t, b) + c0, v.w.at(t, b) + c0,
                                                      v.r.at(t, b) + c0, m, p, v.reset_mean, v.reset_var, mean_out,
                                                      var_out, width);
              },
              v.is_reset(t, b), v.has_input);
        }
        m = mean_out;
        p = var_out;
      }
    }
  });
}

struct Grads {
  torch::Tensor a, bu, q, w, r, m0, p0;  // [T, B, N] each (bu undefined without input); m0, p0 [B, N]
};

template <class S>
void backward_cpu(const Inputs& in, const S* mean, const S* var, const S* grad_mean, const S* grad_var, Grads& out) {
  const View<S> v(in);
  const int64_t steps = v.steps, batch = v.batch, n = v.n;
  S *d_a = out.a.data_ptr<S>(), *d_q = out.q.data_ptr<S>(), *d_w = out.w.data_ptr<S>(), *d_r = out.r.data_ptr<S>();
  S* d_bu = v.has_input ? out.bu.data_ptr<S>() : nullptr;
  S *d_m0 = out.m0.data_ptr<S>(), *d_p0 = out.p0.data_ptr<S>();
  const int64_t units = channel_block_units(batch, n);
  at::parallel_for(0, units, channel_block_grain(steps), [&](int64_t begin, int64_t end) {
    std::vector<S> adjoint(static_cast<size_t>(2 * kChannelBlock));
    for (int64_t unit = begin; unit < end; ++unit) {
      const ChannelBlock block = channel_block(unit, n);
      // Named copies, not a structured binding: the lambda below captures them, which clang before 16 rejects.
      const int64_t b = block.b, c0 = block.c0, width = block.width;
      S* g_m = adjoint.data();
      S* g_p = g_m + kChannelBlock;
      std::fill(g_m, g_m + width, S(0));
      std::fill(g_p, g_p + width, S(0));
      for (int64_t t = steps - 1; t >= 0; --t) {
        const int64_t row = (t * batch + b) * n + c0;
        for (int64_t c = 0; c < width; ++c) {
          if (grad_mean != nullptr) g_m[c] += grad_mean[row + c];
          if (grad_var != nullptr) g_p[c] += grad_var[row + c];
        }
        const S* m = t == 0 ? v.m0 + b * n + c0 : mean + row - batch * n;
        const S* p = t == 0 ? v.p0 + b * n + c0 : var + row - batch * n;
        if (v.is_pad(t, b)) {  // the belief passes through unchanged, and so does its adjoint
          for (S* d : {d_a, d_q, d_w, d_r, d_bu})
            if (d != nullptr) std::fill(d + row, d + row + width, S(0));
          continue;
        }
        const S* bu_row = v.has_input ? v.bu.at(t, b) + c0 : nullptr;
        S* d_bu_row = v.has_input ? d_bu + row : nullptr;
        with_flags(
            [&](auto kReset, auto kHasInput) {
              backward_row<S, kReset(), kHasInput()>(v.a.at(t, b) + c0, bu_row, v.q.at(t, b) + c0, v.w.at(t, b) + c0,
                                                     v.r.at(t, b) + c0, m, p, v.reset_mean, v.reset_var, g_m, g_p,
                                                     d_a + row, d_bu_row, d_q + row, d_w + row, d_r + row, width);
            },
            v.is_reset(t, b), v.has_input);
      }
      std::copy(g_m, g_m + width, d_m0 + b * n + c0);
      std::copy(g_p, g_p + width, d_p0 + b * n + c0);
    }
  });
}

class KfFilterFunction : public torch::autograd::Function<KfFilterFunction> {
 public:
  // Tensor inputs a, bu, q, w, r, m0, p0 (bu may be undefined); flags and the reset belief as non-tensor data.
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a,
                                              const torch::Tensor& bu, const torch::Tensor& q, const torch::Tensor& w,
                                              const torch::Tensor& r, const torch::Tensor& m0, const torch::Tensor& p0,
                                              const torch::Tensor& starts, const torch::Tensor& pad, double reset_mean,
                                              double reset_var) {
    // Absent inputs arrive as empty tensors (autograd takes no undefined ones) and become undefined here.
    const Inputs in{unit_channel_stride(a),
                    bu.numel() > 0 ? unit_channel_stride(bu) : torch::Tensor(),
                    unit_channel_stride(q),
                    unit_channel_stride(w),
                    unit_channel_stride(r),
                    m0.contiguous(),
                    p0.contiguous(),
                    starts.numel() > 0 ? starts.contiguous() : torch::Tensor(),
                    pad.numel() > 0 ? pad.contiguous() : torch::Tensor(),
                    reset_mean,
                    reset_var};
    auto mean = torch::empty(w.sizes(), w.options());
    auto var = torch::empty(w.sizes(), w.options());
    if (w.is_cuda()) {
      kf_filter_cuda_forward(in, mean, var);
    } else {
      AT_DISPATCH_FLOATING_TYPES(w.scalar_type(), "kf_filter", [&] {
        forward_cpu<scalar_t>(in, mean.data_ptr<scalar_t>(), var.data_ptr<scalar_t>());
      });
    }
    ctx->save_for_backward({in.a, in.bu, in.q, in.w, in.r, in.m0, in.p0, mean, var});
    ctx->saved_data["starts"] = in.starts;
    ctx->saved_data["pad"] = in.pad;
    ctx->saved_data["reset_mean"] = reset_mean;
    ctx->saved_data["reset_var"] = reset_var;
    return {mean, var};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Inputs in{saved[0],
                    saved[1],
                    saved[2],
                    saved[3],
                    saved[4],
                    saved[5],
                    saved[6],
                    ctx->saved_data["starts"].toOptional<torch::Tensor>().value_or(torch::Tensor()),
                    ctx->saved_data["pad"].toOptional<torch::Tensor>().value_or(torch::Tensor()),
                    ctx->saved_data["reset_mean"].toDouble(),
                    ctx->saved_data["reset_var"].toDouble()};
    const auto& mean = saved[7];
    const auto& var = saved[8];
    const auto grad_mean = grads[0].defined() ? grads[0].contiguous() : grads[0];
    const auto grad_var = grads[1].defined() ? grads[1].contiguous() : grads[1];
    const auto full = [&] { return torch::empty(mean.sizes(), mean.options()); };
    Grads out{full(),
              in.bu.defined() ? full() : torch::Tensor(),
              full(),
              full(),
              full(),
              torch::empty_like(in.m0),
              torch::empty_like(in.p0)};
    if (mean.is_cuda()) {
      kf_filter_cuda_backward(in, mean, var, grad_mean, grad_var, out.a, out.bu, out.q, out.w, out.r, out.m0, out.p0);
    } else {
      AT_DISPATCH_FLOATING_TYPES(mean.scalar_type(), "kf_filter_backward", [&] {
        backward_cpu<scalar_t>(in, mean.data_ptr<scalar_t>(), var.data_ptr<scalar_t>(),
                               grad_mean.defined() ? grad_mean.data_ptr<scalar_t>() : nullptr,
                               grad_var.defined() ? grad_var.data_ptr<scalar_t>() : nullptr, out);
      });
    }
    return {out.a,  out.bu,          out.q,           out.w,           out.r,          out.m0,
            out.p0, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

KfScanOutput kf_filter(const KfScanInputs& in, const torch::Tensor& init_mean, const torch::Tensor& init_var) {
  const auto shape = in.w.sizes();
  const auto or_empty = [](const torch::Tensor& x, const torch::TensorOptions& options) {
    return x.defined() ? x : torch::empty({0}, options);
  };
  const torch::Tensor bu = in.u.defined() ? in.beta * in.u : torch::empty({0}, in.w.options());
  const auto flags = in.w.options().dtype(torch::kBool);
  const auto out =
      KfFilterFunction::apply(in.a.expand(shape), bu, in.q.expand(shape), in.w, in.r, init_mean, init_var,
                              or_empty(in.starts, flags), or_empty(in.pad, flags), in.reset_mean, in.reset_var);
  return {out[0], out[1]};
}

#ifndef RLM_HAVE_CUDA
void kf_filter_cuda_forward(const KfFilterInputs&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "kf_filter: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}

void kf_filter_cuda_backward(const KfFilterInputs&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             const at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&,
                             at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "kf_filter: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
#endif

}  // namespace rlm::scan
