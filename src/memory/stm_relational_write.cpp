#include "memory/stm_relational_write.hpp"

#include <vector>

#include "memory/stm_cuda_kernels.hpp"
#include "scan/simd_clones.hpp"

namespace rlm::memory {
namespace {

constexpr int64_t kLanes = simd::kLanes<float>;  // the row reductions' partial sums (simd_clones.hpp)

// Σ_c x[c]·y[c] over n floats.
RLM_ALWAYS_INLINE float dot(const float* __restrict x, const float* __restrict y, int64_t n) {
  float lanes[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += x[c + l] * y[c + l];
  float tail = 0.0f;
  for (; c < n; ++c) tail += x[c] * y[c];
  return simd::add_lanes(tail, lanes);
}

// Per batch entry, every array as in the header: T [nkv, nq·d] (row r = (s, a) of M^r is column r of T), V [nkv, d],
// M^r [nq·d, d].
struct Entry {
  const float* scores;
  const float* value;
  const float* prev;         // M^r_{t−1} (kPrev)
  const float* next_weight;  // w [nq·d] (kRead)
};

// Each of the nq·d rows of M^r_t is α1·M^r_{t−1}'s row plus nkv scaled rows of V, accumulated in place (the row stays
// in L1 across the nkv passes); with kRead the next read v[c] = Σ_r w[r]·M^r_t[r, c] is summed as the rows are written.
template <bool kPrev, bool kRead>
RLM_ALWAYS_INLINE void forward_entry(const Entry& e, float alpha1, int64_t rows, int64_t keys, int64_t d,
                                     float* __restrict out, float* __restrict read) {
  if constexpr (kRead)
    for (int64_t c = 0; c < d; ++c) read[c] = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    float* __restrict row = out + r * d;
    if constexpr (kPrev) {
      const float* __restrict p = e.prev + r * d;
      for (int64_t c = 0; c < d; ++c) row[c] = alpha1 * p[c];
    } else {
      for (int64_t c = 0; c < d; ++c) row[c] = 0.0f;
    }
    for (int64_t j = 0; j < keys; ++j) {
      const float t = e.scores[j * rows + r];
      const float* __restrict v = e.value + j * d;
      for (int64_t c = 0; c < d; ++c) row[c] += t * v[c];
    }
    if constexpr (kRead) {
      const float w = e.next_weight[r];
      for (int64_t c = 0; c < d; ++c) read[c] += w * row[c];
    }
  }
}

// Backward of one batch entry from ∂M^r_t (`grad`) and, with kRead, ∂v (`d_read`): the row's full gradient is
// g = grad row + w[r]·∂v (the read's rank-1 part, never written out), then ∂T[j, r] = g·V[j], ∂V[j] += T[j, r]·g,
// ∂w[r] = ∂v·(M^r_t row) and with kPrev ∂M^r_{t−1} row = α1·g and ∂α1 += g·(M^r_{t−1} row). Returns the entry's ∂α1.
template <bool kPrev, bool kRead>
RLM_ALWAYS_INLINE double backward_entry(const Entry& e, const float* __restrict grad, const float* __restrict out,
                                        const float* __restrict d_read, float alpha1, int64_t rows, int64_t keys,
                                        int64_t d, float* __restrict g_row, float* __restrict d_scores,
                                        float* __restrict d_value, float* __restrict d_prev,
                                        float* __restrict d_next_weight) {
  for (int64_t i = 0; i < keys * d; ++i) d_value[i] = 0.0f;
  double d_alpha = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict g = grad + r * d;
    if constexpr (kRead) {
      const float w = e.next_weight[r];
      for (int64_t c = 0; c < d; ++c) g_row[c] = g[c] + w * d_read[c];
      d_next_weight[r] = dot(d_read, out + r * d, d);
      g = g_row;
    }
    if constexpr (kPrev) {
      const float* __restrict p = e.prev + r * d;
      float* __restrict dp = d_prev + r * d;
      for (int64_t c = 0; c < d; ++c) dp[c] = alpha1 * g[c];
      d_alpha += dot(g, p, d);
    }
    for (int64_t j = 0; j < keys; ++j) {
      const float* __restrict v = e.value + j * d;
      float* __restrict dv = d_value + j * d;
      const float t = e.scores[j * rows + r];
      d_scores[j * rows + r] = dot(g, v, d);
      for (int64_t c = 0; c < d; ++c) dv[c] += t * g[c];
    }
  }
  return d_alpha;
}

struct Shape {
  int64_t batch, slots, keys, d;
  int64_t rows() const { return slots * d; }
  int64_t rel() const { return slots * d * d; }
  int64_t score() const { return keys * slots * d; }
  int64_t val() const { return keys * d; }
};

Entry entry(const Shape& s, int64_t b, const float* scores, const float* value, const float* prev,
            const float* next_weight) {
  return {scores + b * s.score(), value + b * s.val(), prev != nullptr ? prev + b * s.rel() : nullptr,
          next_weight != nullptr ? next_weight + b * s.rows() : nullptr};
}

RLM_ALWAYS_INLINE void relational_forward(const Shape& s, const float* scores, const float* value, const float* prev,
                                          float alpha1, const float* next_weight, float* out, float* read) {
  for (int64_t b = 0; b < s.batch; ++b) {
    const Entry e = entry(s, b, scores, value, prev, next_weight);
    float* o = out + b * s.rel();
    float* v = read != nullptr ? read + b * s.d : nullptr;
#define RLM_STM_FORWARD(PREV, READ) forward_entry<PREV, READ>(e, alpha1, s.rows(), s.keys, s.d, o, v)
    if (prev != nullptr) {
      next_weight != nullptr ? RLM_STM_FORWARD(true, true) : RLM_STM_FORWARD(true, false);
    } else {
      next_weight != nullptr ? RLM_STM_FORWARD(false, true) : RLM_STM_FORWARD(false, false);
    }
#undef RLM_STM_FORWARD
  }
}

RLM_ALWAYS_INLINE double relational_backward(const Shape& s, const float* grad, const float* scores, const float* value,
                                             const float* prev, float alpha1, const float* next_weight,
                                             const float* out, const float* d_read, float* d_scores, float* d_value,
                                             float* d_prev, float* d_next_weight) {
  std::vector<float> g_row(static_cast<size_t>(s.d));
  double d_alpha = 0.0;
  for (int64_t b = 0; b < s.batch; ++b) {
    const Entry e = entry(s, b, scores, value, prev, next_weight);
    const float* gr = grad + b * s.rel();
    const float* o = out + b * s.rel();
    const float* dr = d_read != nullptr ? d_read + b * s.d : nullptr;
    float* ds = d_scores + b * s.score();
    float* dv = d_value + b * s.val();
    float* dp = d_prev != nullptr ? d_prev + b * s.rel() : nullptr;
    float* dw = d_next_weight != nullptr ? d_next_weight + b * s.rows() : nullptr;
#define RLM_STM_BACKWARD(PREV, READ) \
  backward_entry<PREV, READ>(e, gr, o, dr, alpha1, s.rows(), s.keys, s.d, g_row.data(), ds, dv, dp, dw)
    if (prev != nullptr) {
      d_alpha += next_weight != nullptr ? RLM_STM_BACKWARD(true, true) : RLM_STM_BACKWARD(true, false);
    } else {
      next_weight != nullptr ? RLM_STM_BACKWARD(false, true) : RLM_STM_BACKWARD(false, false);
    }
#undef RLM_STM_BACKWARD
  }
  return d_alpha;
}

const float* data_or_null(const torch::Tensor& t) { return t.numel() > 0 ? t.data_ptr<float>() : nullptr; }
float* data_or_null(torch::Tensor& t) { return t.numel() > 0 ? t.data_ptr<float>() : nullptr; }

/// The node. `prev`, `alpha1` and `next_weight` come in empty where absent (autograd functions take no undefined
/// inputs); the read output is then empty too.
struct RelationalWriteNode : torch::autograd::Function<RelationalWriteNode> {
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& scores,
                                              const torch::Tensor& value, const torch::Tensor& prev,
                                              const torch::Tensor& alpha1, const torch::Tensor& next_weight) {
    const Shape s{scores.size(0), scores.size(2), scores.size(1), scores.size(3)};
    const auto t = scores.contiguous(), v = value.contiguous(), p = prev.contiguous(), w = next_weight.contiguous();
    auto out = torch::empty({s.batch, s.slots, s.d, s.d}, scores.options());
    auto read = torch::empty({w.numel() > 0 ? s.batch : 0, 1, s.d}, scores.options());
    if (t.is_cuda()) {  // α1 is read on the device: no host sync
      stm_relational_cuda_forward(t, v, p, alpha1.contiguous(), w, out, read);
    } else {
      const float a1 = p.numel() > 0 ? alpha1.item<float>() : 0.0f;
      simd::dispatch<relational_forward>(s, t.data_ptr<float>(), v.data_ptr<float>(), data_or_null(p), a1,
                                         data_or_null(w), out.data_ptr<float>(), data_or_null(read));
    }
    ctx->save_for_backward({t, v, p, alpha1, w, out});
    return {out, read};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &t = saved[0], &v = saved[1], &p = saved[2], &alpha1 = saved[3], &w = saved[4];
    const torch::Tensor& out = saved[5];
    const Shape s{t.size(0), t.size(2), t.size(1), t.size(3)};
    const bool carried = p.numel() > 0, reads = w.numel() > 0;
    // An output that nothing used has no gradient: zeros in its place. Absent inputs get empty gradients.
    const auto grad = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(out);
    const auto d_read = !reads               ? torch::empty({0}, out.options())
                        : grads[1].defined() ? grads[1].contiguous()
                                             : torch::zeros({s.batch, 1, s.d}, out.options());
    auto d_scores = torch::empty_like(t), d_value = torch::empty_like(v);
    auto d_prev = torch::empty_like(p), d_weight = torch::empty_like(w);
    if (t.is_cuda()) {
      auto d_alpha = stm_relational_cuda_backward(grad, d_read, t, v, p, alpha1.contiguous(), w, out, d_scores, d_value,
                                                  d_prev, d_weight);
      return {d_scores, d_value, d_prev, d_alpha, d_weight};
    }
    const double d_alpha = simd::dispatch<relational_backward>(
        s, grad.data_ptr<float>(), t.data_ptr<float>(), v.data_ptr<float>(), data_or_null(p),
        carried ? alpha1.item<float>() : 0.0f, data_or_null(w), out.data_ptr<float>(), data_or_null(d_read),
        d_scores.data_ptr<float>(), d_value.data_ptr<float>(), data_or_null(d_prev), data_or_null(d_weight));
    return {d_scores, d_value, d_prev, torch::full_like(alpha1, d_alpha), d_weight};
  }
};

}  // namespace

RelationalWrite stm_relational_write(const torch::Tensor& scores, const torch::Tensor& value, const torch::Tensor& prev,
                                     const torch::Tensor& alpha1, const torch::Tensor& next_weight) {
  TORCH_CHECK((scores.is_cpu() || scores.is_cuda()) && scores.scalar_type() == torch::kFloat,
              "stm_relational_write: float32 on the CPU or a CUDA device");
  TORCH_CHECK(prev.defined() == alpha1.defined(), "stm_relational_write: prev and alpha1 come together");
  const auto none = torch::empty({0}, scores.options());
  auto outputs =
      RelationalWriteNode::apply(scores, value, prev.defined() ? prev : none, alpha1.defined() ? alpha1 : none,
                                 next_weight.defined() ? next_weight : none);
  return {outputs[0], next_weight.defined() ? outputs[1] : torch::Tensor()};
}

#ifndef RLM_HAVE_CUDA
bool stm_cuda_fusable(int64_t, int64_t, int) { return false; }

void stm_relational_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                 const at::Tensor&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "stm_relational_write: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}

at::Tensor stm_relational_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                        const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                        at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "stm_relational_write: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
  return {};
}
#endif

}  // namespace rlm::memory
