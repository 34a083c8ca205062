// CUDA kernels of the fused SHM op (shm_scan.hpp; design in docs/models/scans.md). C_t and U_t are generated
// from their rank-1 factors in registers, so nothing of size [T, B, H, H] is ever stored.
// Layout: one block per (batch entry b, tile of kRows memory rows i), one thread per column j. A thread keeps its
// kRows elements M[i, j] in registers and walks time; loads of vc, k, q (indexed by j) are coalesced, theta, v (by i)
// are broadcasts. Sums over j (the read y_i, ∂theta_i, ∂v_i, ∂eta) are warp shuffles plus one shared-memory step;
// sums over i (∂vc_j, ∂k_j, ∂q_j) are per-thread within a tile and added over tiles afterwards.
// Backward recomputes each chunk of states from its checkpoint into per-thread local memory and walks it in reverse.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "scan/shm_scan_kernels.hpp"

namespace rlm::scan {
namespace {

constexpr int kRows = 32;      // memory rows per block
constexpr int kMaxChunk = 16;  // checkpoint spacing the backward kernel supports (states held per thread)

template <class S>
__device__ inline S warp_sum(S x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_down_sync(0xffffffffu, x, offset);
  return x;
}

template <class S>
__device__ inline S clamp_to(S x, S bound) {
  return bound > S(0) ? (x > bound ? bound : (x < -bound ? -bound : x)) : x;
}

template <class S>
struct ShmParams {
  const S *theta, *vc, *eta, *v, *k, *q;
  const bool* starts;  // may be null
  int64_t steps, batch, size;
  S bound;  // clamp; 0 = off
  int64_t chunk;
};

template <class S>
__global__ void shm_forward_kernel(ShmParams<S> p, const S* m0, S* y, S* m_last, S* checkpoints) {
  __shared__ S partial[kRows][32];
  const int64_t b = blockIdx.x, i0 = static_cast<int64_t>(blockIdx.y) * kRows, H = p.size;
  const int j = threadIdx.x, lane = j & 31, warp = j >> 5, warps = blockDim.x >> 5;
  const int rows = static_cast<int>(H - i0 < kRows ? H - i0 : kRows);
  const bool active = j < H;
  S m[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) m[r] = active && r < rows ? m0[(b * H + i0 + r) * H + j] : S(0);
  for (int64_t t = 0; t < p.steps; ++t) {
    if (t % p.chunk == 0 && active) {
      S* ck = checkpoints + ((t / p.chunk) * p.batch + b) * H * H;
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (r < rows) ck[(i0 + r) * H + j] = m[r];
    }
    const int64_t row = (t * p.batch + b) * H;
    const bool reset = p.starts != nullptr && p.starts[t * p.batch + b];
    const S e = p.eta[t * p.batch + b];
    const S vcj = active ? p.vc[row + j] : S(0), kj = active ? p.k[row + j] : S(0), qj = active ? p.q[row + j] : S(0);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (r >= rows) break;
      const S th = p.theta[row + i0 + r], vi = p.v[row + i0 + r];
      const S carried = reset ? S(0) : (S(1) + tanh(th * vcj)) * m[r];
      m[r] = active ? clamp_to(carried + e * vi * kj, p.bound) : S(0);
      const S sum = warp_sum(m[r] * qj);
      if (lane == 0) partial[r][warp] = sum;
    }
    __syncthreads();
    if (j < rows) {
      S total = 0;
      for (int w = 0; w < warps; ++w) total += partial[j][w];
      y[row + i0 + j] = total;
    }
    __syncthreads();
  }
  if (active) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (r < rows) m_last[(b * H + i0 + r) * H + j] = m[r];
  }
}

// part_vc/part_k/part_q: [tiles, T, B, H] and part_eta: [tiles, T, B], per-tile sums over this tile's rows (summed
// over tiles afterwards in a fixed order: no atomics, so the gradients are deterministic).
template <class S>
__global__ void shm_backward_kernel(ShmParams<S> p, const S* checkpoints, const S* grad_y, const S* grad_m_last,
                                    S* d_theta, S* part_eta, S* d_v, S* part_vc, S* part_k, S* part_q, S* d_m0) {
  __shared__ S red_theta[kRows][32];
  __shared__ S red_v[kRows][32];
  __shared__ S red_eta[32];
  const int64_t b = blockIdx.x, tile = blockIdx.y, i0 = tile * kRows, H = p.size;
  const int j = threadIdx.x, lane = j & 31, warp = j >> 5, warps = blockDim.x >> 5;
  const int rows = static_cast<int>(H - i0 < kRows ? H - i0 : kRows);
  const bool active = j < H;
  const int64_t part_offset = tile * p.steps * p.batch * H;
  S g[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    g[r] = active && r < rows && grad_m_last != nullptr ? grad_m_last[(b * H + i0 + r) * H + j] : S(0);
  S states[(kMaxChunk + 1) * kRows];  // states[s][r] = M_{t0 + s - 1}[i0 + r, j]
  const int64_t chunks = (p.steps + p.chunk - 1) / p.chunk;
  for (int64_t c = chunks - 1; c >= 0; --c) {
    const int64_t t0 = c * p.chunk, t1 = t0 + p.chunk < p.steps ? t0 + p.chunk : p.steps;
    const S* ck = checkpoints + (c * p.batch + b) * H * H;
#pragma unroll
    for (int r = 0; r < kRows; ++r) states[r] = active && r < rows ? ck[(i0 + r) * H + j] : S(0);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t row = (t * p.batch + b) * H, s = t - t0;
      const bool reset = p.starts != nullptr && p.starts[t * p.batch + b];
      const S e = p.eta[t * p.batch + b];
      const S vcj = active ? p.vc[row + j] : S(0), kj = active ? p.k[row + j] : S(0);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const S carried =
            reset ? S(0) : (S(1) + tanh(p.theta[row + i0 + (r < rows ? r : 0)] * vcj)) * states[s * kRows + r];
        const S vi = p.v[row + i0 + (r < rows ? r : 0)];
        states[(s + 1) * kRows + r] = active && r < rows ? clamp_to(carried + e * vi * kj, p.bound) : S(0);
      }
    }
    for (int64_t t = t1 - 1; t >= t0; --t) {
      const int64_t row = (t * p.batch + b) * H, s = t - t0;
      const bool reset = p.starts != nullptr && p.starts[t * p.batch + b];
      const S e = p.eta[t * p.batch + b];
      const S vcj = active ? p.vc[row + j] : S(0), kj = active ? p.k[row + j] : S(0), qj = active ? p.q[row + j] : S(0);
      S dq = 0, dvc = 0, dk = 0, de = 0;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r >= rows) break;
        const S th = p.theta[row + i0 + r], vi = p.v[row + i0 + r], dy = grad_y[row + i0 + r];
        const S prev = states[s * kRows + r], cur = states[(s + 1) * kRows + r];
        dq += dy * cur;
        S gij = active ? g[r] + dy * qj : S(0);
        const S tz = tanh(th * vcj);
        if (p.bound > S(0)) {
          const S pre = (reset ? S(0) : (S(1) + tz) * prev) + e * vi * kj;
          if (pre > p.bound || pre < -p.bound) gij = 0;
        }
        de += gij * vi * kj;
        const S dv_part = gij * e * kj;
        dk += gij * e * vi;
        S dth_part = 0;
        if (reset) {
          g[r] = 0;
        } else {
          const S dz = gij * prev * (S(1) - tz * tz);
          dth_part = dz * vcj;
          dvc += dz * th;
          g[r] = gij * (S(1) + tz);
        }
        const S sum_theta = warp_sum(dth_part), sum_v = warp_sum(dv_part);
        if (lane == 0) {
          red_theta[r][warp] = sum_theta;
          red_v[r][warp] = sum_v;
        }
      }
      const S sum_eta = warp_sum(de);
      if (lane == 0) red_eta[warp] = sum_eta;
      if (active) {
        const int64_t at = part_offset + row + j;
        part_vc[at] = dvc;
        part_k[at] = dk;
        part_q[at] = dq;
      }
      __syncthreads();
      if (j < rows) {
        S total_theta = 0, total_v = 0;
        for (int w = 0; w < warps; ++w) {
          total_theta += red_theta[j][w];
          total_v += red_v[j][w];
        }
        d_theta[row + i0 + j] = total_theta;
        d_v[row + i0 + j] = total_v;
      }
      if (j == 0) {
        S total = 0;
        for (int w = 0; w < warps; ++w) total += red_eta[w];
        part_eta[tile * p.steps * p.batch + t * p.batch + b] = total;
      }
      __syncthreads();
    }
  }
  if (active) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      if (r < rows) d_m0[(b * H + i0 + r) * H + j] = g[r];
  }
}

template <class S>
ShmParams<S> make_params(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                         const at::Tensor& k, const at::Tensor& q, const at::Tensor& starts, double clamp,
                         int64_t chunk) {
  return {theta.data_ptr<S>(),
          vc.data_ptr<S>(),
          eta.data_ptr<S>(),
          v.data_ptr<S>(),
          k.data_ptr<S>(),
          q.data_ptr<S>(),
          starts.defined() ? starts.data_ptr<bool>() : nullptr,
          theta.size(0),
          theta.size(1),
          theta.size(2),
          static_cast<S>(clamp > 0 ? clamp : 0),
          chunk};
}

dim3 grid_for(int64_t batch, int64_t size) {
  return dim3(static_cast<unsigned>(batch), static_cast<unsigned>((size + kRows - 1) / kRows));
}
unsigned threads_for(int64_t size) { return static_cast<unsigned>((size + 31) / 32 * 32); }

void check_sizes(int64_t size, int64_t chunk) {
  TORCH_CHECK(size <= 1024, "shm_scan (CUDA): memory size H must be <= 1024, got ", size);
  TORCH_CHECK(chunk >= 1 && chunk <= kMaxChunk, "shm_scan (CUDA): checkpoint spacing must be in [1, ", kMaxChunk,
              "], got ", chunk);
}

// A block of H threads holds kRows state (or adjoint) values per thread in registers; for a large H the compiled
// kernel may not fit a block that size on this device. Say so instead of failing the launch.
template <class Kernel>
void check_block(Kernel kernel, int64_t size, const char* which) {
  cudaFuncAttributes attributes{};
  C10_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  TORCH_CHECK(static_cast<int64_t>(threads_for(size)) <= attributes.maxThreadsPerBlock, "shm_scan (CUDA): H = ", size,
              " needs ", threads_for(size), " threads per block, but the ", which, " kernel launches at most ",
              attributes.maxThreadsPerBlock, " on this device (registers per thread); use a smaller H or the CPU");
}

}  // namespace

void shm_scan_cuda_forward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                           const at::Tensor& k, const at::Tensor& q, const at::Tensor& m0, const at::Tensor& starts,
                           double clamp, int64_t chunk, at::Tensor& y, at::Tensor& m_last, at::Tensor& checkpoints) {
  const c10::cuda::CUDAGuard guard(theta.device());
  check_sizes(theta.size(2), chunk);
  AT_DISPATCH_FLOATING_TYPES(theta.scalar_type(), "shm_scan_cuda_forward", [&] {
    check_block(shm_forward_kernel<scalar_t>, theta.size(2), "forward");
    const auto params = make_params<scalar_t>(theta, vc, eta, v, k, q, starts, clamp, chunk);
    shm_forward_kernel<scalar_t>
        <<<grid_for(theta.size(1), theta.size(2)), threads_for(theta.size(2)), 0, at::cuda::getCurrentCUDAStream()>>>(
            params, m0.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), m_last.data_ptr<scalar_t>(),
            checkpoints.data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void shm_scan_cuda_backward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                            const at::Tensor& k, const at::Tensor& q, const at::Tensor& starts, double clamp,
                            int64_t chunk, const at::Tensor& checkpoints, const at::Tensor& grad_y,
                            const at::Tensor& grad_m_last, at::Tensor& d_theta, at::Tensor& d_vc, at::Tensor& d_eta,
                            at::Tensor& d_v, at::Tensor& d_k, at::Tensor& d_q, at::Tensor& d_m0) {
  const c10::cuda::CUDAGuard guard(theta.device());
  const int64_t steps = theta.size(0), batch = theta.size(1), size = theta.size(2);
  check_sizes(size, chunk);
  const int64_t tiles = (size + kRows - 1) / kRows;
  auto parts = at::empty({3, tiles, steps, batch, size}, theta.options());
  auto eta_parts = at::empty({tiles, steps, batch}, theta.options());
  AT_DISPATCH_FLOATING_TYPES(theta.scalar_type(), "shm_scan_cuda_backward", [&] {
    check_block(shm_backward_kernel<scalar_t>, size, "backward");
    const auto params = make_params<scalar_t>(theta, vc, eta, v, k, q, starts, clamp, chunk);
    scalar_t* part = parts.data_ptr<scalar_t>();
    const int64_t part_size = tiles * steps * batch * size;
    shm_backward_kernel<scalar_t><<<grid_for(batch, size), threads_for(size), 0, at::cuda::getCurrentCUDAStream()>>>(
        params, checkpoints.data_ptr<scalar_t>(), grad_y.data_ptr<scalar_t>(),
        grad_m_last.defined() ? grad_m_last.data_ptr<scalar_t>() : nullptr, d_theta.data_ptr<scalar_t>(),
        eta_parts.data_ptr<scalar_t>(), d_v.data_ptr<scalar_t>(), part, part + part_size, part + 2 * part_size,
        d_m0.data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
  const auto sums = parts.sum(1);  // over tiles: [3, T, B, H]
  d_vc.copy_(sums[0]);
  d_k.copy_(sums[1]);
  d_q.copy_(sums[2]);
  d_eta.copy_(eta_parts.sum(0));
}

}  // namespace rlm::scan
