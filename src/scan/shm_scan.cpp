#include "scan/shm_scan.hpp"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "scan/channel_rows.hpp"
#include "scan/shm_scan_kernels.hpp"

namespace rlm::scan {
namespace {

// Time steps between stored states: backward recomputes the states inside a chunk from the one before it, so the
// op keeps T/kShmChunk states of [B, H, H] instead of T.
constexpr int64_t kShmChunk = 32;
constexpr int64_t kShmChunkCuda = 16;  // the CUDA kernel holds a chunk of states per thread: smaller chunks

struct Inputs {
  torch::Tensor theta, vc, eta, v, k, q, m0, starts;  // contiguous
};

Inputs contiguous_inputs(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                         const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q,
                         const torch::Tensor& m0, const torch::Tensor& starts) {
  return {theta.contiguous(), vc.contiguous(),  eta.contiguous(), v.contiguous(),
          k.contiguous(),     q.contiguous(),   m0.contiguous(),  starts.defined() ? starts.contiguous() : starts};
}

void check_shm_inputs(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                      const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q, const torch::Tensor& m0,
                      const torch::Tensor& starts) {
  TORCH_CHECK(theta.dim() == 3, "shm_scan: theta must be [T, B, H], got ", theta.sizes());
  for (const auto* t : {&vc, &v, &k, &q})
    TORCH_CHECK(t->sizes() == theta.sizes(), "shm_scan: vc, v, k and q must have theta's shape ", theta.sizes(),
                ", got ", t->sizes());
  const int64_t steps = theta.size(0), batch = theta.size(1), size = theta.size(2);
  TORCH_CHECK(eta.dim() == 2 && eta.size(0) == steps && eta.size(1) == batch, "shm_scan: eta must be [T, B], got ",
              eta.sizes());
  TORCH_CHECK(m0.dim() == 3 && m0.size(0) == batch && m0.size(1) == size && m0.size(2) == size,
              "shm_scan: m0 must be [B, H, H], got ", m0.sizes());
  const auto type = theta.scalar_type();
  TORCH_CHECK(type == torch::kFloat32 || type == torch::kFloat64, "shm_scan: dtype must be float32 or float64");
  for (const auto* t : {&vc, &eta, &v, &k, &q, &m0}) {
    TORCH_CHECK(t->scalar_type() == type, "shm_scan: every input must share theta's dtype");
    TORCH_CHECK(t->device() == theta.device(), "shm_scan: every input must be on theta's device");
  }
  if (starts.defined())
    TORCH_CHECK(starts.scalar_type() == torch::kBool && starts.dim() == 2 && starts.size(0) == steps &&
                    starts.size(1) == batch && starts.device() == theta.device(),
                "shm_scan: starts must be bool [T, B] on theta's device, got ", starts.sizes());
}

// ---- CPU: one task per batch entry (every reduction then stays inside the task: no atomics, deterministic) ----

// The calibration C = 1 + tanh(z), z = θ_{t,i} · vc_{t,j}, is kept as its half σ(2z) (1 + tanh z = 2σ(2z) exactly;
// 1 − tanh² z = 4σ(2z)(1 − σ(2z))): for the steps [t0, t1) of batch entry b, into table[t − t0] ([H, H] each).
// Whole-tensor ATen ops: a scalar std::tanh per element was most of the op's CPU time (H² per token, about 1 G calls
// per 64 × 1024 minibatch at H = 128, once forward and twice backward), and ATen's sigmoid is several times faster
// than its tanh (0.4-0.7 against 3.5 ns per float32 element on the dev VM).
void half_calibration(const Inputs& in, int64_t b, int64_t t0, int64_t t1, torch::Tensor& table) {
  at::NoGradGuard no_grad;  // thread-local: parallel_for's workers do not inherit the caller's mode
  auto out = table.narrow(0, 0, t1 - t0);
  at::mul_out(out, in.theta.select(1, b).slice(0, t0, t1).unsqueeze(2), in.vc.select(1, b).slice(0, t0, t1).unsqueeze(1));
  out.mul_(2).sigmoid_();
}

// Independent partial sums in the row reductions: one running sum is a chain of dependent additions that the compiler
// must not reorder (strict floating point), so it would stay scalar; kLanes sums added in a fixed order vectorise and
// keep the result deterministic.
constexpr int64_t kLanes = 8;

template <class S>
S dot(const S* __restrict a, const S* __restrict b, int64_t n) {
  S lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += a[j + l] * b[j + l];
  S sum = 0;
  for (; j < n; ++j) sum += a[j] * b[j];
  for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

// One row i of M_t = clamp(C ⊙ M_{t−1} + η v_i k_j) from that row of C/2 (`half_c`); `out` may be `prev` (in place).
// ∂L/∂M_t for row i: G + dy qᵀ (G, the adjoint carried from step t + 1, is updated in place), zero where the clamp
// cut the value (M_t does not depend on the pre-clamp value); adds row i's share of ∂q (dy M_t) and ∂k (∂M η v_i).
// The clamp and the reset are template flags: as runtime conditions they kept GCC from vectorising the loop.
template <class S, bool kClamp, bool kReset>
void state_grad_row(const S* __restrict prev, const S* __restrict cur, const S* __restrict half_c,
                    const S* __restrict q, const S* __restrict k, S dy, S ev, S bound, S* __restrict g,
                    S* __restrict dq, S* __restrict dk, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    dq[j] += dy * cur[j];
    S gij = g[j] + dy * q[j];
    if constexpr (kClamp) {
      const S pre = (kReset ? S(0) : S(2) * half_c[j] * prev[j]) + ev * k[j];
      gij = std::abs(pre) > bound ? S(0) : gij;  // no ||: its branch would keep the loop scalar
    }
    dk[j] += gij * ev;  // ∂U with U = η v_i k_j
    g[j] = gij;
  }
}

template <class S, bool kClamp, bool kReset>
void state_row_with(const S* __restrict half_c, const S* prev, const S* __restrict k, S ev, S bound, int64_t n,
                    S* out) {
  for (int64_t j = 0; j < n; ++j) {
    const S carried = kReset ? S(0) : S(2) * half_c[j] * prev[j];
    S value = carried + ev * k[j];
    if constexpr (kClamp) value = std::min(std::max(value, -bound), bound);
    out[j] = value;
  }
}

// The clamp and the reset as template flags, so that every case of the loop vectorises.
template <class S>
void state_row(const S* half_c, const S* prev, const S* k, S ev, bool reset, S bound, int64_t n, S* out) {
  with_flags([=](auto clamped, auto reset_here) {
    state_row_with<S, clamped(), reset_here()>(half_c, prev, k, ev, bound, n, out);
  }, bound > 0, reset);
}

template <class S>
void forward_cpu(const Inputs& in, double clamp, S* y, S* m_last, S* checkpoints) {
  const int64_t steps = in.theta.size(0), batch = in.theta.size(1), size = in.theta.size(2);
  const int64_t hh = size * size;
  const S *eta = in.eta.data_ptr<S>(), *v = in.v.data_ptr<S>(), *k = in.k.data_ptr<S>(), *q = in.q.data_ptr<S>();
  const S* m0 = in.m0.data_ptr<S>();
  const bool* starts = in.starts.defined() ? in.starts.data_ptr<bool>() : nullptr;
  const S bound = static_cast<S>(clamp);
  at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
    auto table = torch::empty({std::min(steps, kShmChunk), size, size}, in.theta.options());
    const S* half_c_table = table.data_ptr<S>();
    for (int64_t b = begin; b < end; ++b) {
      S* m = m_last + b * hh;
      std::copy(m0 + b * hh, m0 + (b + 1) * hh, m);
      for (int64_t t0 = 0; t0 < steps; t0 += kShmChunk) {
        const int64_t t1 = std::min(steps, t0 + kShmChunk);
        if (checkpoints != nullptr) std::copy(m, m + hh, checkpoints + ((t0 / kShmChunk) * batch + b) * hh);
        half_calibration(in, b, t0, t1, table);
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t row = (t * batch + b) * size;
          const bool reset = starts != nullptr && starts[t * batch + b];
          const S e = eta[t * batch + b];
          for (int64_t i = 0; i < size; ++i) {
            S* mi = m + i * size;
            state_row(half_c_table + (t - t0) * hh + i * size, mi, k + row, e * v[row + i], reset, bound, size, mi);
            y[row + i] = dot(mi, q + row, size);
          }
        }
      }
    }
  });
}

template <class S>
void backward_cpu(const Inputs& in, double clamp, const S* checkpoints, const S* grad_y, const S* grad_m_last,
                  S* d_theta, S* d_vc, S* d_eta, S* d_v, S* d_k, S* d_q, S* d_m0) {
  const int64_t steps = in.theta.size(0), batch = in.theta.size(1), size = in.theta.size(2);
  const int64_t hh = size * size;
  const S *theta = in.theta.data_ptr<S>(), *vc = in.vc.data_ptr<S>(), *eta = in.eta.data_ptr<S>();
  const S *v = in.v.data_ptr<S>(), *k = in.k.data_ptr<S>(), *q = in.q.data_ptr<S>();
  const bool* starts = in.starts.defined() ? in.starts.data_ptr<bool>() : nullptr;
  const S bound = static_cast<S>(clamp);
  const int64_t chunks = (steps + kShmChunk - 1) / kShmChunk;
  at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
    // Per task: the states of one chunk (kShmChunk + 1 of them: the one before the chunk, then each step's), their
    // halved calibrations C/2, the running adjoint G = ∂L/∂M_t and one row of ∂L/∂z (z = θ_i vc_j).
    std::vector<S> states(static_cast<size_t>((kShmChunk + 1) * hh));
    std::vector<S> adjoint(static_cast<size_t>(hh));
    std::vector<S> dz_row(static_cast<size_t>(size));
    auto table = torch::empty({std::min(steps, kShmChunk), size, size}, in.theta.options());
    const S* half_c_table = table.data_ptr<S>();
    for (int64_t b = begin; b < end; ++b) {
      S* g = adjoint.data();
      if (grad_m_last != nullptr) {
        std::copy(grad_m_last + b * hh, grad_m_last + (b + 1) * hh, g);
      } else {
        std::fill(g, g + hh, S(0));
      }
      for (int64_t chunk = chunks - 1; chunk >= 0; --chunk) {
        const int64_t t0 = chunk * kShmChunk, t1 = std::min(steps, t0 + kShmChunk);
        // Recompute the chunk's states: states[s] = M_{t0 + s - 1}.
        std::copy(checkpoints + (chunk * batch + b) * hh, checkpoints + (chunk * batch + b + 1) * hh, states.data());
        half_calibration(in, b, t0, t1, table);
        for (int64_t t = t0; t < t1; ++t) {
          const S* prev = states.data() + (t - t0) * hh;
          S* cur = states.data() + (t - t0 + 1) * hh;
          const int64_t row = (t * batch + b) * size;
          const bool reset = starts != nullptr && starts[t * batch + b];
          const S e = eta[t * batch + b];
          for (int64_t i = 0; i < size; ++i)
            state_row(half_c_table + (t - t0) * hh + i * size, prev + i * size, k + row, e * v[row + i], reset, bound,
                      size, cur + i * size);
        }
        for (int64_t t = t1 - 1; t >= t0; --t) {
          const int64_t row = (t * batch + b) * size;
          const bool reset = starts != nullptr && starts[t * batch + b];
          const S e = eta[t * batch + b];
          S* __restrict dq = d_q + row;
          S* __restrict dk = d_k + row;
          S* __restrict dvc = d_vc + row;
          S* __restrict dz = dz_row.data();
          const S* __restrict qt = q + row;
          const S* __restrict kt = k + row;
          std::fill(dq, dq + size, S(0));
          std::fill(dk, dk + size, S(0));
          std::fill(dvc, dvc + size, S(0));
          S de = 0;
          for (int64_t i = 0; i < size; ++i) {
            const S* __restrict prev = states.data() + (t - t0) * hh + i * size;  // row i of M_{t−1}
            const S* __restrict cur = prev + hh;                                  // row i of M_t
            const S* __restrict half_c = half_c_table + (t - t0) * hh + i * size;
            S* __restrict gi = g + i * size;
            const S dy = grad_y[row + i], th = theta[row + i], ev = e * v[row + i];
            with_flags([=](auto clamped, auto reset_here) {
              state_grad_row<S, clamped(), reset_here()>(prev, cur, half_c, qt, kt, dy, ev, bound, gi, dq, dk, size);
            }, bound > 0, reset);
            const S r = dot(gi, kt, size);  // Σ_j ∂M_ij k_j
            d_v[row + i] = e * r;
            de += v[row + i] * r;
            // Through C = 1 + tanh(z): ∂z = ∂M_t M_{t−1} sech²(z); the adjoint carried to M_{t−1} is ∂M_t C.
            for (int64_t j = 0; j < size; ++j) {
              const S gij = gi[j], h = half_c[j];
              dz[j] = reset ? S(0) : gij * prev[j] * (S(4) * h * (S(1) - h));
              dvc[j] += dz[j] * th;
              gi[j] = reset ? S(0) : gij * (S(2) * h);
            }
            d_theta[row + i] = dot(dz, vc + row, size);
          }
          d_eta[t * batch + b] = de;
        }
      }
      std::copy(g, g + hh, d_m0 + b * hh);
    }
  });
}

class ShmScanFunction : public torch::autograd::Function<ShmScanFunction> {
 public:
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& theta,
                                              const torch::Tensor& vc, const torch::Tensor& eta,
                                              const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q,
                                              const torch::Tensor& m0, const torch::Tensor& resets, double clamp) {
    const torch::Tensor starts = resets.numel() > 0 ? resets : torch::Tensor();
    const Inputs in = contiguous_inputs(theta, vc, eta, v, k, q, m0, starts);
    const int64_t steps = theta.size(0), batch = theta.size(1), size = theta.size(2);
    auto y = torch::empty({steps, batch, size}, theta.options());
    auto m_last = torch::empty({batch, size, size}, theta.options());
    const int64_t chunk = theta.is_cuda() ? kShmChunkCuda : kShmChunk;
    auto checkpoints = torch::empty({(steps + chunk - 1) / chunk, batch, size, size}, theta.options());
    if (theta.is_cuda()) {
      shm_scan_cuda_forward(in.theta, in.vc, in.eta, in.v, in.k, in.q, in.m0, in.starts, clamp, chunk, y, m_last,
                            checkpoints);
    } else {
      AT_DISPATCH_FLOATING_TYPES(theta.scalar_type(), "shm_scan_forward", [&] {
        forward_cpu<scalar_t>(in, clamp, y.data_ptr<scalar_t>(), m_last.data_ptr<scalar_t>(),
                              checkpoints.data_ptr<scalar_t>());
      });
    }
    ctx->save_for_backward({in.theta, in.vc, in.eta, in.v, in.k, in.q, in.m0, checkpoints});
    ctx->saved_data["has_starts"] = starts.defined();
    if (starts.defined()) ctx->saved_data["starts"] = in.starts;
    ctx->saved_data["clamp"] = clamp;
    return {y, m_last};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    Inputs in{saved[0], saved[1], saved[2], saved[3], saved[4], saved[5], saved[6], torch::Tensor()};
    if (ctx->saved_data["has_starts"].toBool()) in.starts = ctx->saved_data["starts"].toTensor();
    const torch::Tensor& checkpoints = saved[7];
    const double clamp = ctx->saved_data["clamp"].toDouble();
    torch::Tensor grad_y = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(in.theta);
    torch::Tensor grad_m_last = grads[1].defined() ? grads[1].contiguous() : torch::Tensor();
    auto d_theta = torch::empty_like(in.theta), d_vc = torch::empty_like(in.vc), d_eta = torch::empty_like(in.eta);
    auto d_v = torch::empty_like(in.v), d_k = torch::empty_like(in.k), d_q = torch::empty_like(in.q);
    auto d_m0 = torch::empty_like(in.m0);
    if (in.theta.is_cuda()) {
      shm_scan_cuda_backward(in.theta, in.vc, in.eta, in.v, in.k, in.q, in.starts, clamp, kShmChunkCuda, checkpoints,
                             grad_y, grad_m_last, d_theta, d_vc, d_eta, d_v, d_k, d_q, d_m0);
    } else {
      AT_DISPATCH_FLOATING_TYPES(in.theta.scalar_type(), "shm_scan_backward", [&] {
        backward_cpu<scalar_t>(in, clamp, checkpoints.data_ptr<scalar_t>(), grad_y.data_ptr<scalar_t>(),
                               grad_m_last.defined() ? grad_m_last.data_ptr<scalar_t>() : nullptr,
                               d_theta.data_ptr<scalar_t>(), d_vc.data_ptr<scalar_t>(), d_eta.data_ptr<scalar_t>(),
                               d_v.data_ptr<scalar_t>(), d_k.data_ptr<scalar_t>(), d_q.data_ptr<scalar_t>(),
                               d_m0.data_ptr<scalar_t>());
      });
    }
    return {d_theta, d_vc, d_eta, d_v, d_k, d_q, d_m0, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

ShmScanOutput shm_scan(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                       const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q, const torch::Tensor& m0,
                       const torch::Tensor& starts, double state_clamp) {
  check_shm_inputs(theta, vc, eta, v, k, q, m0, starts);
  if (theta.numel() == 0) return {torch::empty_like(theta), m0};  // T, B or H = 0 (no kernel takes an empty grid)
  // Autograd functions cannot take undefined tensors: "no resets" travels as an empty tensor.
  const auto resets = starts.defined() ? starts : torch::empty({0}, theta.options().dtype(torch::kBool));
  auto out = ShmScanFunction::apply(theta, vc, eta, v, k, q, m0, resets, state_clamp);
  return {out[0], out[1]};
}

ShmScanOutput shm_scan_reference(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                                 const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q,
                                 const torch::Tensor& m0, const torch::Tensor& starts, double state_clamp) {
  check_shm_inputs(theta, vc, eta, v, k, q, m0, starts);
  torch::Tensor m = m0;
  std::vector<torch::Tensor> ys;
  for (int64_t t = 0; t < theta.size(0); ++t) {
    auto calibration = 1 + torch::tanh(theta[t].unsqueeze(2) * vc[t].unsqueeze(1));  // [B, H, H]
    auto update = eta[t].view({-1, 1, 1}) * v[t].unsqueeze(2) * k[t].unsqueeze(1);
    torch::Tensor carried = m;
    if (starts.defined()) carried = carried * (~starts[t]).view({-1, 1, 1}).to(m.scalar_type());
    m = calibration * carried + update;
    if (state_clamp > 0) m = m.clamp(-state_clamp, state_clamp);
    ys.push_back(torch::matmul(m, q[t].unsqueeze(2)).squeeze(2));
  }
  return {ys.empty() ? torch::empty_like(theta) : torch::stack(ys), m};
}

#ifndef RLM_HAVE_CUDA
void shm_scan_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                           const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, double, int64_t,
                           at::Tensor&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "shm_scan: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
void shm_scan_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const at::Tensor&, const at::Tensor&, const at::Tensor&, double, int64_t,
                            const at::Tensor&, const at::Tensor&, const at::Tensor&, at::Tensor&, at::Tensor&,
                            at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "shm_scan: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
#endif

}  // namespace rlm::scan
