// CUDA kernels of linear_scan (docs/models/scans.md). Two strategies, chosen by workload:
// - sequential: one thread per (batch, channel) walks time. Consecutive threads own consecutive channels, so every
//   step is one coalesced load per tensor; O(T·N) work, no log factor, same rounding as the CPU loop. Best when
//   N = B·C fills the GPU (N ≳ 16k), which covers FFM and SHM training batches.
// - chunked: for few channels and long sequences, time is cut into chunks of kChunk steps and every (chunk, b, c)
//   gets a thread: pass 1 reduces each chunk to (A = Π gates, X = its scan from zero), pass 2 walks the few chunk
//   totals per (b, c) to get each chunk's incoming state, pass 3 rescans each chunk from it. About 2× the work of
//   the sequential kernel, T/kChunk times more parallelism.
// The backward pass is the same recurrence run in reverse (g_t = ∂h_t + conj(a'_{t+1}) g_{t+1}) by the same kernels,
// followed by an element-wise kernel for ∂a and ∂h0.
#include <ATen/ATen.h>
#include <ATen/Dispatch.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/complex.h>

#include "scan/scan_kernels.hpp"

namespace rlm::scan {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kChunk = 64;

template <class S>
__host__ __device__ inline S conj_of(S x) {
  return x;
}
template <class R>
__host__ __device__ inline c10::complex<R> conj_of(c10::complex<R> x) {
  return c10::complex<R>(x.real(), -x.imag());
}

// One direction of the scan over one (b, c) sequence. Forward: state_t = a_t·state_{t-1} + token_t, token_t = b_t,
// initial state h0, and state_t = token_t where step t starts an episode. Reverse: t runs backwards,
// state_t = conj(a_{t+1})·state_{t+1} + token_t with token_t = ∂h_t, initial state 0, and state_t = token_t for the
// last step and where step t + 1 starts an episode. A cut replaces the state instead of multiplying it by 0, as the
// CPU loop does, so that an inf or NaN state of one episode cannot leak into the next.
template <class S, bool kReverse>
struct Sequence {
  const S* a;
  const S* token;
  const bool* starts;  // may be null
  int64_t steps, batch, channels;
  int64_t sa_t, sa_b, sa_c;  // strides of a
  int64_t st_t, st_b, st_c;  // strides of the token tensor

  // Whether the state entering step t is dropped.
  __device__ bool cut(int64_t t, int64_t bi) const {
    if constexpr (kReverse) {
      return t + 1 >= steps || (starts != nullptr && starts[(t + 1) * batch + bi]);
    } else {
      return starts != nullptr && starts[t * batch + bi];
    }
  }
  // The gate applied to the state entering step t (where there is no cut).
  __device__ S gate(int64_t t, int64_t bi, int64_t c) const {
    if constexpr (kReverse) {
      return conj_of(a[(t + 1) * sa_t + bi * sa_b + c * sa_c]);
    } else {
      return a[t * sa_t + bi * sa_b + c * sa_c];
    }
  }
  __device__ S tok(int64_t t, int64_t bi, int64_t c) const { return token[t * st_t + bi * st_b + c * st_c]; }
  __device__ S step(S state, int64_t t, int64_t bi, int64_t c) const {
    return cut(t, bi) ? tok(t, bi, c) : gate(t, bi, c) * state + tok(t, bi, c);
  }
  // The k-th step in processing order.
  __device__ int64_t time_of(int64_t k) const { return kReverse ? steps - 1 - k : k; }
};

// The sequential kernel loads kAhead steps' gates, tokens and cuts before it computes them: the loads do not depend
// on the state, and with one step's loads in flight per thread (2 blocks of 256 threads per SM at B·C = 64k) the
// forward reached only 39% of an H200's copy bandwidth (issue 33, goal 3). Same operations in the same order, so
// the same rounding.
constexpr int kAhead = 8;

template <class S, bool kReverse>
__global__ void sequential_kernel(Sequence<S, kReverse> seq, const S* initial, S* out) {
  const int64_t n = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (n >= seq.batch * seq.channels) return;
  const int64_t bi = n / seq.channels, c = n % seq.channels;
  S state = initial != nullptr ? initial[n] : S(0);
  for (int64_t k0 = 0; k0 < seq.steps; k0 += kAhead) {
    S gates[kAhead], tokens[kAhead];
    bool cuts[kAhead];
#pragma unroll
    for (int j = 0; j < kAhead; ++j) {
      if (k0 + j >= seq.steps) break;
      const int64_t t = seq.time_of(k0 + j);
      cuts[j] = seq.cut(t, bi);
      tokens[j] = seq.tok(t, bi, c);
      gates[j] = cuts[j] ? S(0) : seq.gate(t, bi, c);  // a cut's gate may lie past the end (reverse, last step)
    }
#pragma unroll
    for (int j = 0; j < kAhead; ++j) {
      if (k0 + j >= seq.steps) break;
      const int64_t t = seq.time_of(k0 + j);
      state = cuts[j] ? tokens[j] : gates[j] * state + tokens[j];
      out[(t * seq.batch + bi) * seq.channels + c] = state;
    }
  }
}

// Pass 1: chunk totals. totals_a/totals_x: [chunks, B·C]. A chunk with a cut gets A = 0 (and X from the cut on).
template <class S, bool kReverse>
__global__ void chunk_reduce_kernel(Sequence<S, kReverse> seq, int64_t chunks, S* totals_a, S* totals_x) {
  const int64_t n_all = seq.batch * seq.channels;
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= chunks * n_all) return;
  const int64_t chunk = idx / n_all, n = idx % n_all, bi = n / seq.channels, c = n % seq.channels;
  S A(1), X(0);
  const int64_t k_end = (chunk + 1) * kChunk < seq.steps ? (chunk + 1) * kChunk : seq.steps;
  for (int64_t k = chunk * kChunk; k < k_end; ++k) {
    const int64_t t = seq.time_of(k);
    if (seq.cut(t, bi)) {
      A = S(0);
      X = seq.tok(t, bi, c);
    } else {
      const S g = seq.gate(t, bi, c);
      A = g * A;
      X = g * X + seq.tok(t, bi, c);
    }
  }
  totals_a[idx] = A;
  totals_x[idx] = X;
}

// Pass 2: the state entering each chunk, written over totals_x (carry[k] = state before chunk k).
template <class S>
__global__ void chunk_carry_kernel(int64_t n_all, int64_t chunks, const S* initial, const S* totals_a, S* totals_x) {
  const int64_t n = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (n >= n_all) return;
  S carry = initial != nullptr ? initial[n] : S(0);
  for (int64_t k = 0; k < chunks; ++k) {
    // A = 0: the chunk cuts (or its gates multiply to exactly 0); X alone then, so no inf/NaN carry leaks through.
    const S A = totals_a[k * n_all + n];
    const S next = A == S(0) ? totals_x[k * n_all + n] : A * carry + totals_x[k * n_all + n];
    totals_x[k * n_all + n] = carry;
    carry = next;
  }
}

// Pass 3: rescan each chunk from its incoming state.
template <class S, bool kReverse>
__global__ void chunk_apply_kernel(Sequence<S, kReverse> seq, int64_t chunks, const S* carries, S* out) {
  const int64_t n_all = seq.batch * seq.channels;
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= chunks * n_all) return;
  const int64_t chunk = idx / n_all, n = idx % n_all, bi = n / seq.channels, c = n % seq.channels;
  S state = carries[idx];
  const int64_t k_end = (chunk + 1) * kChunk < seq.steps ? (chunk + 1) * kChunk : seq.steps;
  for (int64_t k = chunk * kChunk; k < k_end; ++k) {
    const int64_t t = seq.time_of(k);
    state = seq.step(state, t, bi, c);
    out[(t * seq.batch + bi) * seq.channels + c] = state;
  }
}

// ∂a_t = conj(h_{t-1}) g_t (0 where t starts; h_{-1} = h0), ∂h0 = conj(a'_0) g_0.
template <class S>
__global__ void gate_grad_kernel(Sequence<S, false> seq, const S* h0, const S* h, const S* g, S* grad_a, S* grad_h0) {
  const int64_t n_all = seq.batch * seq.channels;
  const int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= seq.steps * n_all) return;
  const int64_t t = idx / n_all, n = idx % n_all, bi = n / seq.channels;
  const bool start = seq.starts != nullptr && seq.starts[t * seq.batch + bi];
  const S prev = t == 0 ? h0[n] : h[idx - n_all];
  grad_a[idx] = start ? S(0) : conj_of(prev) * g[idx];
  if (t == 0) grad_h0[n] = start ? S(0) : conj_of(seq.gate(0, bi, n % seq.channels)) * g[idx];
}

int blocks_for(int64_t work) { return static_cast<int>((work + kThreads - 1) / kThreads); }

bool use_chunks(const ScanArgs& args) { return args.batch * args.channels < 16384 && args.steps >= 4 * kChunk; }

template <class S, bool kReverse>
void run_scan(const Sequence<S, kReverse>& seq, const S* initial, S* out, const at::TensorOptions& options) {
  const int64_t n_all = seq.batch * seq.channels;
  cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (!use_chunks({seq.steps, seq.batch, seq.channels})) {
    sequential_kernel<S, kReverse><<<blocks_for(n_all), kThreads, 0, stream>>>(seq, initial, out);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  const int64_t chunks = (seq.steps + kChunk - 1) / kChunk;
  auto totals = at::empty({2, chunks, n_all}, options);
  S* totals_a = totals.data_ptr<S>();
  S* totals_x = totals_a + chunks * n_all;
  chunk_reduce_kernel<S, kReverse>
      <<<blocks_for(chunks * n_all), kThreads, 0, stream>>>(seq, chunks, totals_a, totals_x);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  chunk_carry_kernel<S><<<blocks_for(n_all), kThreads, 0, stream>>>(n_all, chunks, initial, totals_a, totals_x);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  chunk_apply_kernel<S, kReverse><<<blocks_for(chunks * n_all), kThreads, 0, stream>>>(seq, chunks, totals_x, out);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

template <class S, bool kReverse>
Sequence<S, kReverse> make_sequence(const ScanArgs& args, const at::Tensor& a, const S* token, const int64_t* ts,
                                    const at::Tensor& starts) {
  return {a.data_ptr<S>(),
          token,
          starts.defined() ? starts.data_ptr<bool>() : nullptr,
          args.steps,
          args.batch,
          args.channels,
          args.a_stride[0],
          args.a_stride[1],
          args.a_stride[2],
          ts[0],
          ts[1],
          ts[2]};
}

}  // namespace

void linear_scan_cuda_forward(const ScanArgs& args, const at::Tensor& a, const at::Tensor& b, const at::Tensor& h0,
                              const at::Tensor& starts, at::Tensor& h) {
  const c10::cuda::CUDAGuard guard(b.device());
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(b.scalar_type(), "linear_scan_cuda_forward", [&] {
    const auto seq = make_sequence<scalar_t, false>(args, a, b.data_ptr<scalar_t>(), args.b_stride, starts);
    run_scan(seq, h0.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(), b.options());
  });
}

void linear_scan_cuda_backward(const ScanArgs& args, const at::Tensor& a, const at::Tensor& h0,
                               const at::Tensor& starts, const at::Tensor& h, const at::Tensor& grad_h,
                               at::Tensor& grad_a, at::Tensor& grad_b, at::Tensor& grad_h0) {
  const c10::cuda::CUDAGuard guard(h.device());
  const int64_t contiguous[3] = {args.batch * args.channels, args.channels, 1};
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES(h.scalar_type(), "linear_scan_cuda_backward", [&] {
    const auto reverse = make_sequence<scalar_t, true>(args, a, grad_h.data_ptr<scalar_t>(), contiguous, starts);
    run_scan(reverse, static_cast<const scalar_t*>(nullptr), grad_b.data_ptr<scalar_t>(), h.options());
    const auto forward = make_sequence<scalar_t, false>(args, a, grad_h.data_ptr<scalar_t>(), contiguous, starts);
    const int64_t work = args.steps * args.batch * args.channels;
    gate_grad_kernel<scalar_t><<<blocks_for(work), kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        forward, h0.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(), grad_b.data_ptr<scalar_t>(),
        grad_a.data_ptr<scalar_t>(), grad_h0.data_ptr<scalar_t>());
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace rlm::scan
