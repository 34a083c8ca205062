// shm_scan on the CPU (shm_scan.hpp for the op): one task per batch entry, so every reduction stays inside a task
// (no atomics, deterministic), walking time with the [H, H] state in cache.
//
// Per step, the state update and the read are one pass over the rows (y_i = Σ_j M_t[i, j] q_j summed as the row is
// written), and backward's adjoint update, the ∂z of the calibration and the row sums for ∂v, ∂η and ∂θ are another:
// each pass reads a row of M_{t−1}, M_t and C/2 once. The step functions are compiled for AVX-512, AVX2 and baseline
// x86-64 and picked at run time (simd_clones.hpp): 16 floats per instruction where the build's baseline has 4.
#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "scan/shm_scan_kernels.hpp"
#include "scan/simd_clones.hpp"

namespace rlm::scan {
namespace {

using simd::add_lanes;  // the row reductions' partial sums (simd_clones.hpp)
using simd::kLanes;

// ---- forward: M_t = clamp(C ⊙ M_{t−1} + η v kᵀ), y_t = M_t q ----

// One element of M_t from C/2 (`half_c`), M_{t−1} (`prev`) and U = ev·k.
template <class S, bool kClamp, bool kReset>
RLM_ALWAYS_INLINE S state_value(S half_c, S prev, S k, S ev, S bound) {
  S value = (kReset ? S(0) : S(2) * half_c * prev) + ev * k;
  if constexpr (kClamp) value = std::min(std::max(value, -bound), bound);
  return value;
}

// All rows of one step; kRead: also y_i (backward's recomputation of the states needs no read).
template <class S, bool kClamp, bool kReset, bool kRead>
RLM_ALWAYS_INLINE void forward_rows(const S* __restrict half_c, const S* __restrict prev, S* __restrict cur,
                                    const S* __restrict k, const S* __restrict v, const S* __restrict q, S e, S bound,
                                    int64_t n, S* __restrict y) {
  constexpr int64_t L = kLanes<S>;
  for (int64_t i = 0; i < n; ++i) {
    const S ev = e * v[i];
    const S* __restrict hc = half_c + i * n;
    const S* __restrict pr = prev + i * n;
    S* __restrict out = cur + i * n;
    S lanes[L] = {};
    int64_t j = 0;
    for (; j + L <= n; j += L) {
      for (int64_t l = 0; l < L; ++l) {
        const S value = state_value<S, kClamp, kReset>(hc[j + l], pr[j + l], k[j + l], ev, bound);
        out[j + l] = value;
        if constexpr (kRead) lanes[l] += value * q[j + l];
      }
    }
    S tail = 0;
    for (; j < n; ++j) {
      const S value = state_value<S, kClamp, kReset>(hc[j], pr[j], k[j], ev, bound);
      out[j] = value;
      if constexpr (kRead) tail += value * q[j];
    }
    if constexpr (kRead) y[i] = add_lanes(tail, lanes);
  }
}

// The step's facts as template flags (runtime conditions kept GCC from vectorising the loops).
template <class S>
RLM_ALWAYS_INLINE void forward_step_impl(const S* half_c, const S* prev, S* cur, const S* k, const S* v, const S* q,
                                         S e, bool reset, S bound, int64_t n, S* y) {
#define RLM_SHM_FORWARD(CLAMP, RESET)                                                             \
  (y != nullptr ? forward_rows<S, CLAMP, RESET, true>(half_c, prev, cur, k, v, q, e, bound, n, y) \
                : forward_rows<S, CLAMP, RESET, false>(half_c, prev, cur, k, v, q, e, bound, n, y))
  if (bound > 0) {
    reset ? RLM_SHM_FORWARD(true, true) : RLM_SHM_FORWARD(true, false);
  } else {
    reset ? RLM_SHM_FORWARD(false, true) : RLM_SHM_FORWARD(false, false);
  }
#undef RLM_SHM_FORWARD
}

// ---- backward of one step ----

// ∂L/∂M_t for row i is G + dy qᵀ (G, the adjoint carried from step t + 1, updated in place), zero where the clamp
// cut the value (M_t does not depend on the pre-clamp value). From it, in the same pass: row i's share of ∂q (dy M_t),
// of ∂k (∂M η v_i) and of ∂vc (∂z θ_i); the row sums Σ_j ∂M_ij k_j (for ∂v and ∂η) and Σ_j ∂z_ij vc_j (∂θ_i); and
// the adjoint carried to M_{t−1}, ∂M ⊙ C. Through C = 1 + tanh(z) = 2σ(2z): ∂z = ∂M ⊙ M_{t−1} ⊙ sech²(z), with
// sech²(z) = 4σ(2z)(1 − σ(2z)). Returns this step's ∂η.
template <class S, bool kClamp, bool kReset>
RLM_ALWAYS_INLINE S backward_rows(const S* __restrict half_c, const S* __restrict prev, const S* __restrict cur,
                                  const S* __restrict q, const S* __restrict k, const S* __restrict vc,
                                  const S* __restrict theta, const S* __restrict v, const S* __restrict grad_y, S e,
                                  S bound, int64_t n, S* __restrict g, S* __restrict dq, S* __restrict dk,
                                  S* __restrict dvc, S* __restrict d_theta, S* __restrict d_v) {
  constexpr int64_t L = kLanes<S>;
  std::fill(dq, dq + n, S(0));
  std::fill(dk, dk + n, S(0));
  std::fill(dvc, dvc + n, S(0));
  S de = 0;
  for (int64_t i = 0; i < n; ++i) {
    const S dy = grad_y[i], th = theta[i], ev = e * v[i];
    const S* __restrict hc = half_c + i * n;
    const S* __restrict pr = prev + i * n;
    const S* __restrict cu = cur + i * n;
    S* __restrict gi = g + i * n;
    S r_lanes[L] = {}, dz_lanes[L] = {};
    auto element = [&](int64_t j, S & r_sum, S & dz_sum) __attribute__((always_inline)) {
      dq[j] += dy * cu[j];
      S gij = gi[j] + dy * q[j];
      if constexpr (kClamp) {
        const S pre = (kReset ? S(0) : S(2) * hc[j] * pr[j]) + ev * k[j];
        gij = std::abs(pre) > bound ? S(0) : gij;  // no ||: its branch would keep the loop scalar
      }
      dk[j] += gij * ev;
      r_sum += gij * k[j];
      if constexpr (kReset) {
        gi[j] = S(0);  // M_t did not depend on M_{t−1}, nor on C
      } else {
        const S h = hc[j];
        const S dz = gij * pr[j] * (S(4) * h * (S(1) - h));
        dvc[j] += dz * th;
        dz_sum += dz * vc[j];
        gi[j] = gij * (S(2) * h);
      }
    };
    int64_t j = 0;
    for (; j + L <= n; j += L)
      for (int64_t l = 0; l < L; ++l) element(j + l, r_lanes[l], dz_lanes[l]);
    S r_tail = 0, dz_tail = 0;
    for (; j < n; ++j) element(j, r_tail, dz_tail);
    const S r = add_lanes(r_tail, r_lanes);
    d_v[i] = e * r;
    de += v[i] * r;
    d_theta[i] = add_lanes(dz_tail, dz_lanes);
  }
  return de;
}

template <class S>
RLM_ALWAYS_INLINE S backward_step_impl(const S* half_c, const S* prev, const S* cur, const S* q, const S* k,
                                       const S* vc, const S* theta, const S* v, const S* grad_y, S e, bool reset,
                                       S bound, int64_t n, S* g, S* dq, S* dk, S* dvc, S* d_theta, S* d_v) {
#define RLM_SHM_BACKWARD(CLAMP, RESET)                                                                                \
  backward_rows<S, CLAMP, RESET>(half_c, prev, cur, q, k, vc, theta, v, grad_y, e, bound, n, g, dq, dk, dvc, d_theta, \
                                 d_v)
  if (bound > 0) return reset ? RLM_SHM_BACKWARD(true, true) : RLM_SHM_BACKWARD(true, false);
  return reset ? RLM_SHM_BACKWARD(false, true) : RLM_SHM_BACKWARD(false, false);
#undef RLM_SHM_BACKWARD
}

// ---- the calibration ----

RLM_ALWAYS_INLINE float exp_of(float x) { return expf(x); }
RLM_ALWAYS_INLINE double exp_of(double x) { return exp(x); }

// The calibration C = 1 + tanh(z), z = θ_i · vc_j, is kept as its half σ(2z) (1 + tanh z = 2σ(2z) exactly;
// 1 − tanh² z = 4σ(2z)(1 − σ(2z))): out[i, j] = 1 / (1 + exp(−2 θ_i vc_j)), in one vectorised pass (it was an
// outer product, then ATen's sigmoid over the chunk: 41% of an SHM POPGym run at H = 128, against the state
// update's and its backward's 32%).
template <class S>
RLM_ALWAYS_INLINE void half_calibration_impl(const S* __restrict theta, const S* __restrict vc, int64_t n,
                                             S* __restrict out) {
  for (int64_t i = 0; i < n; ++i) {
    const S a = S(-2) * theta[i];
    for (int64_t j = 0; j < n; ++j) out[i * n + j] = S(1) / (S(1) + exp_of(a * vc[j]));
  }
}

// C/2 for the steps [t0, t1) of batch entry b, into table[t − t0] ([H, H] each).
template <class S>
void half_calibration(const S* theta, const S* vc, int64_t batch, int64_t n, int64_t b, int64_t t0, int64_t t1,
                      S* table) {
  for (int64_t t = t0; t < t1; ++t)
    simd::dispatch<half_calibration_impl<S>>(theta + (t * batch + b) * n, vc + (t * batch + b) * n, n,
                                             table + (t - t0) * n * n);
}

template <class S>
void forward_cpu(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                 const at::Tensor& k, const at::Tensor& q, const at::Tensor& m0, const at::Tensor& starts_t,
                 double clamp, S* y, S* m_last, S* checkpoints) {
  const int64_t steps = theta.size(0), batch = theta.size(1), n = theta.size(2), hh = n * n;
  const S *th = theta.data_ptr<S>(), *c = vc.data_ptr<S>();
  const S *e = eta.data_ptr<S>(), *vp = v.data_ptr<S>(), *kp = k.data_ptr<S>(), *qp = q.data_ptr<S>();
  const S* m0p = m0.data_ptr<S>();
  const bool* starts = starts_t.defined() ? starts_t.data_ptr<bool>() : nullptr;
  const S bound = static_cast<S>(clamp);
  at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
    std::vector<S> table(static_cast<size_t>(std::min(steps, kShmChunkCpu) * hh));
    const S* half_c = table.data();
    std::vector<S> buffers(static_cast<size_t>(2 * hh));  // M_{t−1} and M_t, swapped every step
    for (int64_t b = begin; b < end; ++b) {
      S* prev = buffers.data();
      S* cur = prev + hh;
      std::copy(m0p + b * hh, m0p + (b + 1) * hh, prev);
      for (int64_t t0 = 0; t0 < steps; t0 += kShmChunkCpu) {
        const int64_t t1 = std::min(steps, t0 + kShmChunkCpu);
        if (checkpoints != nullptr) std::copy(prev, prev + hh, checkpoints + ((t0 / kShmChunkCpu) * batch + b) * hh);
        half_calibration(th, c, batch, n, b, t0, t1, table.data());
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t row = (t * batch + b) * n;
          const bool reset = starts != nullptr && starts[t * batch + b];
          simd::dispatch<forward_step_impl<S>>(half_c + (t - t0) * hh, prev, cur, kp + row, vp + row, qp + row,
                                               e[t * batch + b], reset, bound, n, y + row);
          std::swap(prev, cur);
        }
      }
      std::copy(prev, prev + hh, m_last + b * hh);
    }
  });
}

template <class S>
void backward_cpu(const at::Tensor& theta_t, const at::Tensor& vc_t, const at::Tensor& eta_t, const at::Tensor& v_t,
                  const at::Tensor& k_t, const at::Tensor& q_t, const at::Tensor& starts_t, double clamp,
                  const S* checkpoints, const S* grad_y, const S* grad_m_last, S* d_theta, S* d_vc, S* d_eta, S* d_v,
                  S* d_k, S* d_q, S* d_m0) {
  const int64_t steps = theta_t.size(0), batch = theta_t.size(1), n = theta_t.size(2), hh = n * n;
  const S *theta = theta_t.data_ptr<S>(), *vc = vc_t.data_ptr<S>(), *eta = eta_t.data_ptr<S>();
  const S *v = v_t.data_ptr<S>(), *k = k_t.data_ptr<S>(), *q = q_t.data_ptr<S>();
  const bool* starts = starts_t.defined() ? starts_t.data_ptr<bool>() : nullptr;
  const S bound = static_cast<S>(clamp);
  const int64_t chunks = (steps + kShmChunkCpu - 1) / kShmChunkCpu;
  at::parallel_for(0, batch, 1, [&](int64_t begin, int64_t end) {
    // Per task: the states of one chunk (kShmChunkCpu + 1 of them: the one before the chunk, then each step's),
    // their halved calibrations C/2 and the running adjoint G = ∂L/∂M_t.
    std::vector<S> states(static_cast<size_t>((kShmChunkCpu + 1) * hh));
    std::vector<S> adjoint(static_cast<size_t>(hh));
    std::vector<S> table(static_cast<size_t>(std::min(steps, kShmChunkCpu) * hh));
    const S* half_c = table.data();
    for (int64_t b = begin; b < end; ++b) {
      S* g = adjoint.data();
      if (grad_m_last != nullptr) {
        std::copy(grad_m_last + b * hh, grad_m_last + (b + 1) * hh, g);
      } else {
        std::fill(g, g + hh, S(0));
      }
      for (int64_t chunk = chunks - 1; chunk >= 0; --chunk) {
        const int64_t t0 = chunk * kShmChunkCpu, t1 = std::min(steps, t0 + kShmChunkCpu);
        // Recompute the chunk's states: states[s] = M_{t0 + s − 1}.
        std::copy(checkpoints + (chunk * batch + b) * hh, checkpoints + (chunk * batch + b + 1) * hh, states.data());
        half_calibration(theta, vc, batch, n, b, t0, t1, table.data());
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t row = (t * batch + b) * n;
          const bool reset = starts != nullptr && starts[t * batch + b];
          simd::dispatch<forward_step_impl<S>>(half_c + (t - t0) * hh, states.data() + (t - t0) * hh,
                                               states.data() + (t - t0 + 1) * hh, k + row, v + row, q + row,
                                               eta[t * batch + b], reset, bound, n, static_cast<S*>(nullptr));
        }
        for (int64_t t = t1 - 1; t >= t0; --t) {
          const int64_t row = (t * batch + b) * n;
          const bool reset = starts != nullptr && starts[t * batch + b];
          const S* prev = states.data() + (t - t0) * hh;
          d_eta[t * batch + b] = simd::dispatch<backward_step_impl<S>>(
              half_c + (t - t0) * hh, prev, prev + hh, q + row, k + row, vc + row, theta + row, v + row, grad_y + row,
              eta[t * batch + b], reset, bound, n, g, d_q + row, d_k + row, d_vc + row, d_theta + row, d_v + row);
        }
      }
      std::copy(g, g + hh, d_m0 + b * hh);
    }
  });
}

}  // namespace

void shm_scan_cpu_forward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                          const at::Tensor& k, const at::Tensor& q, const at::Tensor& m0, const at::Tensor& starts,
                          double clamp, at::Tensor& y, at::Tensor& m_last, at::Tensor& checkpoints) {
  AT_DISPATCH_FLOATING_TYPES(theta.scalar_type(), "shm_scan_forward", [&] {
    forward_cpu<scalar_t>(theta, vc, eta, v, k, q, m0, starts, clamp, y.data_ptr<scalar_t>(),
                          m_last.data_ptr<scalar_t>(), checkpoints.data_ptr<scalar_t>());
  });
}

void shm_scan_cpu_backward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                           const at::Tensor& k, const at::Tensor& q, const at::Tensor& starts, double clamp,
                           const at::Tensor& checkpoints, const at::Tensor& grad_y, const at::Tensor& grad_m_last,
                           at::Tensor& d_theta, at::Tensor& d_vc, at::Tensor& d_eta, at::Tensor& d_v, at::Tensor& d_k,
                           at::Tensor& d_q, at::Tensor& d_m0) {
  AT_DISPATCH_FLOATING_TYPES(theta.scalar_type(), "shm_scan_backward", [&] {
    backward_cpu<scalar_t>(
        theta, vc, eta, v, k, q, starts, clamp, checkpoints.data_ptr<scalar_t>(), grad_y.data_ptr<scalar_t>(),
        grad_m_last.defined() ? grad_m_last.data_ptr<scalar_t>() : nullptr, d_theta.data_ptr<scalar_t>(),
        d_vc.data_ptr<scalar_t>(), d_eta.data_ptr<scalar_t>(), d_v.data_ptr<scalar_t>(), d_k.data_ptr<scalar_t>(),
        d_q.data_ptr<scalar_t>(), d_m0.data_ptr<scalar_t>());
  });
}

}  // namespace rlm::scan
