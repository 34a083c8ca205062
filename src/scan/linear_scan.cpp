#include "scan/linear_scan.hpp"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <c10/util/complex.h>

#include <algorithm>

#include "scan/channel_rows.hpp"
#include "scan/scan_kernels.hpp"

namespace rlm::scan {
namespace {

template <class S>
S conj_of(S x) {
  return x;
}
template <class R>
c10::complex<R> conj_of(c10::complex<R> x) {
  return std::conj(x);
}

template <class S>
void forward_cpu(const ScanArgs& args, const S* a, const S* b, const S* h0, const bool* starts, S* h) {
  const int64_t steps = args.steps, batch = args.batch, channels = args.channels;
  // Units of one batch entry and a block of channels walking time: the inner loop over the block is contiguous in the
  // output (and in a and b when their channel stride is 1), so it vectorises.
  const int64_t units = channel_block_units(batch, channels);
  at::parallel_for(0, units, channel_block_grain(steps), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const auto [bi, c0, n] = channel_block(unit, channels);
      const S* prev = h0 + bi * channels + c0;
      for (int64_t t = 0; t < steps; ++t) {
        S* out = h + (t * batch + bi) * channels + c0;
        const S* at = a + t * args.a_stride[0] + bi * args.a_stride[1] + c0 * args.a_stride[2];
        const S* bt = b + t * args.b_stride[0] + bi * args.b_stride[1] + c0 * args.b_stride[2];
        const int64_t sa = args.a_stride[2], sb = args.b_stride[2];
        if (starts != nullptr && starts[t * batch + bi]) {
          for (int64_t c = 0; c < n; ++c) out[c] = bt[c * sb];
        } else if (sa == 1 && sb == 1) {
          for (int64_t c = 0; c < n; ++c) out[c] = at[c] * prev[c] + bt[c];
        } else {
          for (int64_t c = 0; c < n; ++c) out[c] = at[c * sa] * prev[c] + bt[c * sb];
        }
        prev = out;
      }
    }
  });
}

// Reverse scan: g_t = ∂h_t + conj(a'_{t+1}) g_{t+1} (a' = 0 where step t+1 starts an episode), written into grad_b;
// grad_a_t = conj(h_{t-1}) g_t (0 where step t starts); grad_h0 = conj(a'_0) g_0.
template <class S>
void backward_cpu(const ScanArgs& args, const S* a, const S* h0, const bool* starts, const S* h, const S* grad_h,
                  S* grad_a, S* grad_b, S* grad_h0) {
  const int64_t steps = args.steps, batch = args.batch, channels = args.channels;
  const int64_t units = channel_block_units(batch, channels);
  at::parallel_for(0, units, channel_block_grain(steps), [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const auto [bi, c0, n] = channel_block(unit, channels);
      const int64_t sa = args.a_stride[2];
      for (int64_t t = steps - 1; t >= 0; --t) {
        const int64_t row = (t * batch + bi) * channels + c0;
        S* g = grad_b + row;
        const S* dh = grad_h + row;
        if (t == steps - 1) {
          for (int64_t c = 0; c < n; ++c) g[c] = dh[c];
        } else if (starts != nullptr && starts[(t + 1) * batch + bi]) {
          for (int64_t c = 0; c < n; ++c) g[c] = dh[c];
        } else {
          const S* next_a = a + (t + 1) * args.a_stride[0] + bi * args.a_stride[1] + c0 * sa;
          const S* next_g = g + batch * channels;
          for (int64_t c = 0; c < n; ++c) g[c] = dh[c] + conj_of(next_a[c * sa]) * next_g[c];
        }
        S* ga = grad_a + row;
        if (starts != nullptr && starts[t * batch + bi]) {
          for (int64_t c = 0; c < n; ++c) ga[c] = S(0);
        } else {
          const S* prev = t == 0 ? h0 + bi * channels + c0 : h + row - batch * channels;
          for (int64_t c = 0; c < n; ++c) ga[c] = conj_of(prev[c]) * g[c];
        }
      }
      S* gh0 = grad_h0 + bi * channels + c0;
      if (starts != nullptr && starts[bi]) {
        for (int64_t c = 0; c < n; ++c) gh0[c] = S(0);
      } else {
        const S* a0 = a + bi * args.a_stride[1] + c0 * sa;
        const S* g0 = grad_b + bi * channels + c0;
        for (int64_t c = 0; c < n; ++c) gh0[c] = conj_of(a0[c * sa]) * g0[c];
      }
    }
  });
}

ScanArgs make_args(const torch::Tensor& a, const torch::Tensor& b) {
  ScanArgs args;
  args.steps = b.size(0);
  args.batch = b.size(1);
  args.channels = b.size(2);
  for (int d = 0; d < 3; ++d) {
    args.a_stride[d] = a.stride(d);
    args.b_stride[d] = b.stride(d);
  }
  return args;
}

void check_inputs(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0,
                  const torch::Tensor& starts) {
  TORCH_CHECK(b.dim() == 3, "linear_scan: b must be [T, B, C], got ", b.sizes());
  TORCH_CHECK(a.sizes() == b.sizes(), "linear_scan: a ", a.sizes(), " and b ", b.sizes(), " differ in shape");
  TORCH_CHECK(h0.dim() == 2 && h0.size(0) == b.size(1) && h0.size(1) == b.size(2), "linear_scan: h0 must be [B, C] = [",
              b.size(1), ", ", b.size(2), "], got ", h0.sizes());
  TORCH_CHECK(a.scalar_type() == b.scalar_type() && h0.scalar_type() == b.scalar_type(),
              "linear_scan: a, b and h0 must share one dtype");
  TORCH_CHECK(a.device() == b.device() && h0.device() == b.device(), "linear_scan: a, b and h0 must share one device");
  const auto type = b.scalar_type();
  TORCH_CHECK(type == torch::kFloat32 || type == torch::kFloat64 || type == torch::kComplexFloat ||
                  type == torch::kComplexDouble,
              "linear_scan: dtype must be float32, float64, complex64 or complex128, got ", type);
  if (starts.defined()) {
    TORCH_CHECK(starts.scalar_type() == torch::kBool, "linear_scan: starts must be bool");
    TORCH_CHECK(starts.dim() == 2 && starts.size(0) == b.size(0) && starts.size(1) == b.size(1),
                "linear_scan: starts must be [T, B] = [", b.size(0), ", ", b.size(1), "], got ", starts.sizes());
    TORCH_CHECK(starts.device() == b.device(), "linear_scan: starts must be on the device of b");
  }
}

torch::Tensor scan_forward(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0,
                           const torch::Tensor& starts) {
  auto h = torch::empty(b.sizes(), b.options());
  if (b.numel() == 0) return h;
  const auto h0c = h0.contiguous();
  const auto startsc = starts.defined() ? starts.contiguous() : starts;
  const ScanArgs args = make_args(a, b);
  if (b.is_cuda()) {
    linear_scan_cuda_forward(args, a, b, h0c, startsc, h);
    return h;
  }
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(b.scalar_type(), "linear_scan_forward", [&] {
    forward_cpu<scalar_t>(args, a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(), h0c.data_ptr<scalar_t>(),
                          startsc.defined() ? startsc.data_ptr<bool>() : nullptr, h.data_ptr<scalar_t>());
  });
  return h;
}

class LinearScanFunction : public torch::autograd::Function<LinearScanFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& a, const torch::Tensor& b,
                               const torch::Tensor& h0, const torch::Tensor& resets) {
    const torch::Tensor starts = resets.numel() > 0 ? resets : torch::Tensor();
    torch::Tensor h = scan_forward(a, b, h0, starts);
    ctx->save_for_backward({a, h0, h});
    ctx->saved_data["has_starts"] = starts.defined();
    if (starts.defined()) ctx->saved_data["starts"] = starts.contiguous();
    ctx->saved_data["b_sizes"] = b.sizes().vec();
    return h;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &a = saved[0], &h0 = saved[1], &h = saved[2];
    const torch::Tensor starts =
        ctx->saved_data["has_starts"].toBool() ? ctx->saved_data["starts"].toTensor() : torch::Tensor();
    torch::Tensor grad_h = grad_outputs[0];
    if (!grad_h.defined()) grad_h = torch::zeros_like(h);
    grad_h = grad_h.resolve_conj().resolve_neg().contiguous();  // e.g. when h was used through h.conj()
    auto grad_a = torch::empty(h.sizes(), h.options());
    auto grad_b = torch::empty(h.sizes(), h.options());
    auto grad_h0 = torch::empty(h0.sizes(), h0.options());
    if (h.numel() > 0) {
      const auto h0c = h0.contiguous();
      const ScanArgs args = make_args(a, h);
      if (h.is_cuda()) {
        linear_scan_cuda_backward(args, a, h0c, starts, h, grad_h, grad_a, grad_b, grad_h0);
      } else {
        AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(h.scalar_type(), "linear_scan_backward", [&] {
          backward_cpu<scalar_t>(args, a.data_ptr<scalar_t>(), h0c.data_ptr<scalar_t>(),
                                 starts.defined() ? starts.data_ptr<bool>() : nullptr, h.data_ptr<scalar_t>(),
                                 grad_h.data_ptr<scalar_t>(), grad_a.data_ptr<scalar_t>(), grad_b.data_ptr<scalar_t>(),
                                 grad_h0.data_ptr<scalar_t>());
        });
      }
    } else {
      grad_h0.zero_();
    }
    return {grad_a, grad_b, grad_h0, torch::Tensor()};
  }
};

}  // namespace

torch::Tensor linear_scan(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0,
                          const torch::Tensor& starts) {
  check_inputs(a, b, h0, starts);
  // Autograd functions cannot take undefined tensors: "no resets" travels as an empty tensor.
  const auto resets = starts.defined() ? starts : torch::empty({0}, b.options().dtype(torch::kBool));
  // The kernels read raw memory, which ignores lazy conjugate and negative views (x.conj() of a complex tensor):
  // materialise them (a no-op for ordinary tensors).
  return LinearScanFunction::apply(a.resolve_conj().resolve_neg(), b.resolve_conj().resolve_neg(),
                                   h0.resolve_conj().resolve_neg(), resets);
}

torch::Tensor linear_scan_reference(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0,
                                    const torch::Tensor& starts) {
  check_inputs(a, b, h0, starts);
  std::vector<torch::Tensor> states;
  torch::Tensor h = h0;
  for (int64_t t = 0; t < b.size(0); ++t) {
    torch::Tensor gate = a[t];
    if (starts.defined()) gate = gate * (~starts[t]).unsqueeze(-1).to(gate.scalar_type());
    h = gate * h + b[t];
    states.push_back(h);
  }
  return states.empty() ? torch::empty(b.sizes(), b.options()) : torch::stack(states);
}

#ifndef RLM_HAVE_CUDA
void linear_scan_cuda_forward(const ScanArgs&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                              const torch::Tensor&, torch::Tensor&) {
  TORCH_CHECK(false, "linear_scan: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
void linear_scan_cuda_backward(const ScanArgs&, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                               const torch::Tensor&, const torch::Tensor&, torch::Tensor&, torch::Tensor&,
                               torch::Tensor&) {
  TORCH_CHECK(false, "linear_scan: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
#endif

}  // namespace rlm::scan
