// CUDA passes of STM's fused per-step nodes (stm_cuda_kernels.hpp), the same arithmetic as the CPU passes in
// stm_item_write.cpp and stm_relational_write.cpp.
// - Item write: forward is elementwise over [B, d, d]; backward is one block per batch entry, which keeps the
//   gradient under the tanh, ∂Z [d, d], in shared memory (rows padded to d + 1 floats, so that a warp's threads
//   reading a row or a column hit 32 different banks) for the two sums that give ∂a, and sums ∂P over rows for ∂g.
// - Relational write: one block of eight warps per batch entry; a warp takes whole rows of M^r (row r = (s, a)) with
//   its lanes across the d columns, so that the row's loads and stores are coalesced and the sums over a row (∂T,
//   ∂w) are warp shuffles. V stays in shared memory; the sums over rows (the next read forward, ∂V backward) are kept
//   per warp in shared memory and added over the warps at the end, in a fixed order, as is ∂α1 over the batch.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "memory/stm_cuda_kernels.hpp"

namespace rlm::memory {
namespace {

constexpr int kWarps = 8;  // per block of the relational kernels
constexpr int kThreads = 32 * kWarps;
constexpr int kMaxColumns = 8;  // columns of a row per lane in the relational backward: d <= 256

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

template <class S>
__device__ inline S warp_sum(S x) {
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_down_sync(0xffffffffu, x, offset);
  return x;
}

size_t item_backward_smem(int64_t d) { return static_cast<size_t>(d * (d + 1)) * sizeof(float); }
size_t relational_forward_smem(int64_t keys, int64_t d) {
  return static_cast<size_t>(keys * d + kWarps * d) * sizeof(float);
}
size_t relational_backward_smem(int64_t keys, int64_t d) {
  return static_cast<size_t>((1 + kWarps) * keys * d + d) * sizeof(float);
}

// Lets `kernel` use `bytes` of dynamic shared memory (above 48 KB needs asking) or says why it cannot.
template <class Kernel>
void allow_shared_memory(Kernel kernel, size_t bytes) {
  const auto* props = at::cuda::getCurrentDeviceProperties();
  TORCH_CHECK(bytes <= props->sharedMemPerBlockOptin, "stm CUDA kernels: ", bytes,
              " bytes of shared memory per block, the device has ", props->sharedMemPerBlockOptin);
  if (bytes > 48 * 1024)
    C10_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// ---- item write ----

// out[b, e, f] = σ(P[b, e, f] + g[b, f])·tanh(a[b, e]·a[b, f]) + σ(P[b, e, d + f] + g[b, d + f])·M^i[b, e, f].
__global__ void item_write_forward_kernel(const float* __restrict__ pre, const float* __restrict__ gate_x,
                                          const float* __restrict__ a, const float* __restrict__ item, int64_t batch,
                                          int64_t d, float* __restrict__ out) {
  const int64_t n = batch * d * d;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t f = i % d, row = i / d, b = row / d, e = row % d;
    const float* p = pre + row * 2 * d;
    const float* g = gate_x + b * 2 * d;
    const float in = sigmoid(p[f] + g[f]), forget = sigmoid(p[d + f] + g[d + f]);
    const float write = tanhf(a[b * d + e] * a[b * d + f]);
    out[i] = in * write + forget * item[i];
  }
}

// One block per batch entry: ∂P, ∂M^i_{t−1} and ∂Z = ∂out ⊙ I ⊙ (1 − W²) elementwise, then ∂g[f] = Σ_e ∂P[e, f] and
// ∂a[k] = Σ_f ∂Z[k, f]·a[f] + Σ_e ∂Z[e, k]·a[e] (Z = a aᵀ).
__global__ void item_write_backward_kernel(const float* __restrict__ grad, const float* __restrict__ pre,
                                           const float* __restrict__ gate_x, const float* __restrict__ a,
                                           const float* __restrict__ item, int64_t d, float* d_pre,
                                           float* __restrict__ d_gate_x, float* __restrict__ d_a,
                                           float* __restrict__ d_item) {
  extern __shared__ float d_z[];  // [d][d + 1]
  const int64_t b = blockIdx.x, stride = d + 1;
  const float* ab = a + b * d;
  const float* g = gate_x + b * 2 * d;
  for (int64_t i = threadIdx.x; i < d * d; i += blockDim.x) {
    const int64_t e = i / d, f = i % d, row = b * d + e, at = row * d + f;
    const float* p = pre + row * 2 * d;
    const float in = sigmoid(p[f] + g[f]), forget = sigmoid(p[d + f] + g[d + f]);
    const float write = tanhf(ab[e] * ab[f]);
    const float gi = grad[at];
    float* dp = d_pre + row * 2 * d;
    dp[f] = gi * write * in * (1.0f - in);
    dp[d + f] = gi * item[at] * forget * (1.0f - forget);
    d_item[at] = gi * forget;
    d_z[e * stride + f] = gi * in * (1.0f - write * write);
  }
  __syncthreads();  // also makes the block's ∂P writes visible to its threads
  for (int64_t f = threadIdx.x; f < 2 * d; f += blockDim.x) {
    float sum = 0.0f;
    for (int64_t e = 0; e < d; ++e) sum += d_pre[(b * d + e) * 2 * d + f];
    d_gate_x[b * 2 * d + f] = sum;
  }
  for (int64_t k = threadIdx.x; k < d; k += blockDim.x) {
    float by_row = 0.0f, by_column = 0.0f;
    for (int64_t f = 0; f < d; ++f) by_row += d_z[k * stride + f] * ab[f];
    for (int64_t e = 0; e < d; ++e) by_column += d_z[e * stride + k] * ab[e];
    d_a[b * d + k] = by_row + by_column;
  }
}

// ---- relational write ----

struct RelationalShape {
  int64_t rows, keys, d;  // rows = nq·d
};

const float* data_or_null(const at::Tensor& t) { return t.numel() > 0 ? t.data_ptr<float>() : nullptr; }
float* data_or_null(at::Tensor& t) { return t.numel() > 0 ? t.data_ptr<float>() : nullptr; }

// Row r of M^r_t = α1·M^r_{t−1}[r] + Σ_j T[j, r]·V[j]; with a next weight w, read = Σ_r w[r]·M^r_t[r].
__global__ void relational_forward_kernel(const float* __restrict__ scores, const float* __restrict__ value,
                                          const float* __restrict__ prev, const float* __restrict__ alpha1,
                                          const float* __restrict__ next_weight, RelationalShape s,
                                          float* __restrict__ out, float* __restrict__ read) {
  extern __shared__ float smem[];
  float* v = smem;                    // [keys·d]
  float* sums = smem + s.keys * s.d;  // [kWarps][d]: each warp's share of the read
  const int64_t b = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int64_t i = threadIdx.x; i < s.keys * s.d; i += blockDim.x) v[i] = value[b * s.keys * s.d + i];
  if (next_weight != nullptr)
    for (int64_t i = threadIdx.x; i < kWarps * s.d; i += blockDim.x) sums[i] = 0.0f;
  __syncthreads();
  const float a1 = prev != nullptr ? *alpha1 : 0.0f;
  const float* t = scores + b * s.keys * s.rows;
  const float* p = prev != nullptr ? prev + b * s.rows * s.d : nullptr;
  const float* w = next_weight != nullptr ? next_weight + b * s.rows : nullptr;
  float* o = out + b * s.rows * s.d;
  float* my_sums = sums + warp * s.d;
  for (int64_t r = warp; r < s.rows; r += kWarps) {
    const float wr = w != nullptr ? w[r] : 0.0f;
    for (int64_t c = lane; c < s.d; c += 32) {
      float x = p != nullptr ? a1 * p[r * s.d + c] : 0.0f;
      for (int64_t j = 0; j < s.keys; ++j) x += t[j * s.rows + r] * v[j * s.d + c];
      o[r * s.d + c] = x;
      if (w != nullptr) my_sums[c] += wr * x;
    }
  }
  if (next_weight == nullptr) return;
  __syncthreads();
  for (int64_t c = threadIdx.x; c < s.d; c += blockDim.x) {
    float sum = 0.0f;
    for (int k = 0; k < kWarps; ++k) sum += sums[k * s.d + c];
    read[b * s.d + c] = sum;
  }
}

// Backward, per row: g = ∂M^r_t[r] + w[r]·∂v, ∂T[j, r] = g·V[j], ∂V[j] += T[j, r]·g, ∂w[r] = ∂v·M^r_t[r], and where
// M^r is carried ∂M^r_{t−1}[r] = α1·g and the block's share of ∂α1 = Σ g·M^r_{t−1}[r] (in double, into alpha_part[b]).
__global__ void relational_backward_kernel(const float* __restrict__ grad, const float* __restrict__ d_read,
                                           const float* __restrict__ scores, const float* __restrict__ value,
                                           const float* __restrict__ prev, const float* __restrict__ alpha1,
                                           const float* __restrict__ next_weight, const float* __restrict__ out,
                                           RelationalShape s, float* __restrict__ d_scores, float* __restrict__ d_value,
                                           float* __restrict__ d_prev, float* __restrict__ d_next_weight,
                                           double* __restrict__ alpha_part) {
  extern __shared__ float smem[];
  const int64_t kd = s.keys * s.d;
  float* v = smem;                       // [keys·d]
  float* d_v = smem + kd;                // [kWarps][keys·d]: each warp's share of ∂V
  float* dr = smem + (1 + kWarps) * kd;  // [d]: ∂v
  __shared__ double alpha_warps[kWarps];
  const int64_t b = blockIdx.x;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool reads = next_weight != nullptr, carried = prev != nullptr;
  for (int64_t i = threadIdx.x; i < kd; i += blockDim.x) v[i] = value[b * kd + i];
  for (int64_t i = threadIdx.x; i < kWarps * kd; i += blockDim.x) d_v[i] = 0.0f;
  if (reads)
    for (int64_t c = threadIdx.x; c < s.d; c += blockDim.x) dr[c] = d_read[b * s.d + c];
  __syncthreads();
  const float a1 = carried ? *alpha1 : 0.0f;
  const int64_t base = b * s.rows * s.d;
  const float* t = scores + b * s.keys * s.rows;
  float* ds = d_scores + b * s.keys * s.rows;
  float* my_dv = d_v + warp * kd;
  double alpha_sum = 0.0;
  for (int64_t r = warp; r < s.rows; r += kWarps) {
    const int64_t row = base + r * s.d;
    const float wr = reads ? next_weight[b * s.rows + r] : 0.0f;
    float g[kMaxColumns];
    float read_dot = 0.0f;
#pragma unroll
    for (int k = 0; k < kMaxColumns; ++k) {
      const int64_t c = lane + 32 * k;
      g[k] = 0.0f;
      if (c >= s.d) continue;
      float gc = grad[row + c];
      if (reads) {
        gc += wr * dr[c];
        read_dot += dr[c] * out[row + c];
      }
      g[k] = gc;
      if (carried) {
        d_prev[row + c] = a1 * gc;
        alpha_sum += static_cast<double>(gc * prev[row + c]);
      }
    }
    if (reads) {
      read_dot = warp_sum(read_dot);
      if (lane == 0) d_next_weight[b * s.rows + r] = read_dot;
    }
    for (int64_t j = 0; j < s.keys; ++j) {
      const float tj = t[j * s.rows + r];
      float dot = 0.0f;
#pragma unroll
      for (int k = 0; k < kMaxColumns; ++k) {
        const int64_t c = lane + 32 * k;
        if (c >= s.d) continue;
        dot += g[k] * v[j * s.d + c];
        my_dv[j * s.d + c] += tj * g[k];
      }
      dot = warp_sum(dot);
      if (lane == 0) ds[j * s.rows + r] = dot;
    }
  }
  alpha_sum = warp_sum(alpha_sum);
  if (lane == 0) alpha_warps[warp] = alpha_sum;
  __syncthreads();
  for (int64_t i = threadIdx.x; i < kd; i += blockDim.x) {
    float sum = 0.0f;
    for (int k = 0; k < kWarps; ++k) sum += d_v[k * kd + i];
    d_value[b * kd + i] = sum;
  }
  if (carried && threadIdx.x == 0) {
    double sum = 0.0;
    for (int k = 0; k < kWarps; ++k) sum += alpha_warps[k];
    alpha_part[b] = sum;
  }
}

void check_inputs(std::initializer_list<const at::Tensor*> tensors) {
  for (const auto* t : tensors) {
    if (t->numel() == 0) continue;
    TORCH_CHECK(t->is_cuda() && t->scalar_type() == at::kFloat && t->is_contiguous(),
                "stm CUDA kernels: float32 contiguous CUDA tensors");
  }
}

}  // namespace

bool stm_cuda_fusable(int64_t item_size, int64_t slots, int device_index) {
  if (item_size < 1 || item_size > 32 * kMaxColumns || slots < 1) return false;
  const size_t available = at::cuda::getDeviceProperties(device_index)->sharedMemPerBlockOptin;
  const size_t alpha_warps = kWarps * sizeof(double);  // the relational backward's static shared memory
  return item_backward_smem(item_size) <= available &&
         relational_backward_smem(slots, item_size) + alpha_warps <= available;
}

void stm_item_write_cuda_forward(const at::Tensor& gate_pre, const at::Tensor& gate_x, const at::Tensor& a,
                                 const at::Tensor& item, at::Tensor& out) {
  check_inputs({&gate_pre, &gate_x, &a, &item, &out});
  const c10::cuda::CUDAGuard guard(item.device());
  const int64_t batch = item.size(0), d = item.size(1), n = batch * d * d;
  if (n == 0) return;
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65535);
  item_write_forward_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      gate_pre.data_ptr<float>(), gate_x.data_ptr<float>(), a.data_ptr<float>(), item.data_ptr<float>(), batch, d,
      out.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void stm_item_write_cuda_backward(const at::Tensor& grad, const at::Tensor& gate_pre, const at::Tensor& gate_x,
                                  const at::Tensor& a, const at::Tensor& item, at::Tensor& d_pre, at::Tensor& d_gate_x,
                                  at::Tensor& d_a, at::Tensor& d_item) {
  check_inputs({&grad, &gate_pre, &gate_x, &a, &item, &d_pre, &d_gate_x, &d_a, &d_item});
  const c10::cuda::CUDAGuard guard(item.device());
  const int64_t batch = item.size(0), d = item.size(1);
  if (batch == 0) return;
  const size_t smem = item_backward_smem(d);
  allow_shared_memory(item_write_backward_kernel, smem);
  item_write_backward_kernel<<<batch, 256, smem, at::cuda::getCurrentCUDAStream()>>>(
      grad.data_ptr<float>(), gate_pre.data_ptr<float>(), gate_x.data_ptr<float>(), a.data_ptr<float>(),
      item.data_ptr<float>(), d, d_pre.data_ptr<float>(), d_gate_x.data_ptr<float>(), d_a.data_ptr<float>(),
      d_item.data_ptr<float>());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

void stm_relational_cuda_forward(const at::Tensor& scores, const at::Tensor& value, const at::Tensor& prev,
                                 const at::Tensor& alpha1, const at::Tensor& next_weight, at::Tensor& out,
                                 at::Tensor& read) {
  check_inputs({&scores, &value, &prev, &alpha1, &next_weight, &out, &read});
  const c10::cuda::CUDAGuard guard(scores.device());
  const int64_t batch = scores.size(0);
  const RelationalShape s{scores.size(2) * scores.size(3), scores.size(1), scores.size(3)};
  if (batch == 0) return;
  const size_t smem = relational_forward_smem(s.keys, s.d);
  allow_shared_memory(relational_forward_kernel, smem);
  relational_forward_kernel<<<batch, kThreads, smem, at::cuda::getCurrentCUDAStream()>>>(
      scores.data_ptr<float>(), value.data_ptr<float>(), data_or_null(prev), data_or_null(alpha1),
      data_or_null(next_weight), s, out.data_ptr<float>(), data_or_null(read));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}

at::Tensor stm_relational_cuda_backward(const at::Tensor& grad, const at::Tensor& d_read, const at::Tensor& scores,
                                        const at::Tensor& value, const at::Tensor& prev, const at::Tensor& alpha1,
                                        const at::Tensor& next_weight, const at::Tensor& out, at::Tensor& d_scores,
                                        at::Tensor& d_value, at::Tensor& d_prev, at::Tensor& d_next_weight) {
  check_inputs({&grad, &d_read, &scores, &value, &prev, &alpha1, &next_weight, &out, &d_scores, &d_value, &d_prev,
                &d_next_weight});
  const c10::cuda::CUDAGuard guard(scores.device());
  const int64_t batch = scores.size(0);
  const RelationalShape s{scores.size(2) * scores.size(3), scores.size(1), scores.size(3)};
  const bool carried = prev.numel() > 0;
  TORCH_CHECK(s.d <= 32 * kMaxColumns, "stm CUDA kernels: item size ", s.d, " above ", 32 * kMaxColumns);
  auto alpha_part = at::zeros({carried ? batch : 0}, scores.options().dtype(at::kDouble));
  if (batch > 0) {
    const size_t smem = relational_backward_smem(s.keys, s.d);
    allow_shared_memory(relational_backward_kernel, smem);
    relational_backward_kernel<<<batch, kThreads, smem, at::cuda::getCurrentCUDAStream()>>>(
        grad.data_ptr<float>(), data_or_null(d_read), scores.data_ptr<float>(), value.data_ptr<float>(),
        data_or_null(prev), data_or_null(alpha1), data_or_null(next_weight), out.data_ptr<float>(), s,
        d_scores.data_ptr<float>(), d_value.data_ptr<float>(), data_or_null(d_prev), data_or_null(d_next_weight),
        carried ? alpha_part.data_ptr<double>() : nullptr);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
  }
  if (!carried) return at::zeros({0}, scores.options());
  return alpha_part.sum().to(at::kFloat).reshape(alpha1.sizes());
}

}  // namespace rlm::memory
