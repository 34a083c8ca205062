#include "memory/gru_gates_cpu.hpp"

#include <cmath>

#include "scan/simd_clones.hpp"

namespace rlm::memory {
namespace {

RLM_ALWAYS_INLINE float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// One row: the three blocks of gi and gh are H apart. Three loops, not one, so that each is a plain vectorisable
// pass over contiguous floats.
RLM_ALWAYS_INLINE void forward_row(const float* __restrict gi, const float* __restrict gh, const float* __restrict hp,
                                   int64_t h, float* __restrict rz, float* __restrict n, float* __restrict gh_n,
                                   float* __restrict y) {
  for (int64_t j = 0; j < 2 * h; ++j) rz[j] = sigmoid(gi[j] + gh[j]);
  for (int64_t j = 0; j < h; ++j) {
    const float ghn = gh[2 * h + j], r = rz[j], z = rz[h + j];
    const float nj = tanhf(gi[2 * h + j] + r * ghn);
    gh_n[j] = ghn;
    n[j] = nj;
    y[j] = nj + z * (hp[j] - nj);  // (1 − z) ⊙ n + z ⊙ hp
  }
}

RLM_ALWAYS_INLINE void backward_row(const float* __restrict dh, const float* __restrict rz, const float* __restrict n,
                                    const float* __restrict gh_n, const float* __restrict hp, int64_t h,
                                    float* __restrict d_gi, float* __restrict d_gh, float* __restrict dh_z) {
  for (int64_t j = 0; j < h; ++j) {
    const float g = dh[j], r = rz[j], z = rz[h + j], nj = n[j];
    const float d_n = g * (1.0f - z) * (1.0f - nj * nj);  // through n = tanh(·)
    const float d_z = g * (hp[j] - nj) * z * (1.0f - z);  // through z = σ(·)
    const float d_r = d_n * gh_n[j] * r * (1.0f - r);     // through r = σ(·), which scales gh_n
    d_gi[j] = d_r;
    d_gi[h + j] = d_z;
    d_gi[2 * h + j] = d_n;
    d_gh[j] = d_r;
    d_gh[h + j] = d_z;
    d_gh[2 * h + j] = d_n * r;
    dh_z[j] = g * z;
  }
}

RLM_ALWAYS_INLINE void forward_rows(const float* gi, const float* gh, const float* hp, int64_t batch, int64_t hidden,
                                    float* rz, float* n, float* gh_n, float* y) {
  const int64_t h = hidden;
  for (int64_t b = 0; b < batch; ++b)
    forward_row(gi + b * 3 * h, gh + b * 3 * h, hp + b * h, h, rz + b * 2 * h, n + b * h, gh_n + b * h, y + b * h);
}

RLM_ALWAYS_INLINE void backward_rows(const float* dh, const float* rz, const float* n, const float* gh_n,
                                     const float* hp, int64_t batch, int64_t hidden, float* d_gi, float* d_gh,
                                     float* dh_z) {
  const int64_t h = hidden;
  for (int64_t b = 0; b < batch; ++b)
    backward_row(dh + b * h, rz + b * 2 * h, n + b * h, gh_n + b * h, hp + b * h, h, d_gi + b * 3 * h, d_gh + b * 3 * h,
                 dh_z + b * h);
}

}  // namespace

void gru_gates_forward(const float* gi, const float* gh, const float* hp, int64_t batch, int64_t hidden, float* rz,
                       float* n, float* gh_n, float* y) {
  simd::dispatch<forward_rows>(gi, gh, hp, batch, hidden, rz, n, gh_n, y);
}

void gru_gates_backward(const float* dh, const float* rz, const float* n, const float* gh_n, const float* hp,
                        int64_t batch, int64_t hidden, float* d_gi, float* d_gh, float* dh_z) {
  simd::dispatch<backward_rows>(dh, rz, n, gh_n, hp, batch, hidden, d_gi, d_gh, dh_z);
}

}  // namespace rlm::memory
