#include "memory/stm_item_write.hpp"

#include "memory/stm_cuda_kernels.hpp"
#include "scan/simd_clones.hpp"

namespace rlm::memory {
namespace {

constexpr int64_t kLanes = simd::kLanes<float>;  // the row reduction's partial sums (simd_clones.hpp)

RLM_ALWAYS_INLINE float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// Row e of one batch entry: I = σ(P_I + g_I), F = σ(P_F + g_F), W = tanh(a_e a_f), out = I ⊙ W + F ⊙ M^i_{t−1}.
// `gates` keeps [I | F] in P's layout and `write` W for backward.
RLM_ALWAYS_INLINE void forward_row(const float* __restrict pre, const float* __restrict gx, const float* __restrict a,
                                   float a_e, const float* __restrict item, int64_t d, float* __restrict gates,
                                   float* __restrict write, float* __restrict out) {
  for (int64_t f = 0; f < 2 * d; ++f) gates[f] = sigmoid(pre[f] + gx[f]);
  for (int64_t f = 0; f < d; ++f) {
    const float w = tanhf(a_e * a[f]);
    write[f] = w;
    out[f] = gates[f] * w + gates[d + f] * item[f];
  }
}

// Element f of row e backward from ∂out = g: ∂P (through the sigmoids), ∂M^i_{t−1} = g ⊙ F, the sums over rows for
// ∂g (`d_gx` += ∂P) and ∂a (`d_a_col`[f] += ∂Z[e, f] a_e) with ∂Z = g ⊙ I ⊙ (1 − W²) the gradient of Z = a aᵀ under
// the tanh; returns ∂Z[e, f] a_f, the row's own share of ∂a_e.
RLM_ALWAYS_INLINE float backward_element(int64_t f, const float* __restrict g, const float* __restrict gates,
                                         const float* __restrict write, const float* __restrict a, float a_e,
                                         const float* __restrict item, int64_t d, float* __restrict d_pre,
                                         float* __restrict d_gx, float* __restrict d_a_col, float* __restrict d_item) {
  const float gi = g[f], in = gates[f], fo = gates[d + f], w = write[f];
  const float dp_in = gi * w * in * (1.0f - in);
  const float dp_fo = gi * item[f] * fo * (1.0f - fo);
  d_pre[f] = dp_in;
  d_pre[d + f] = dp_fo;
  d_gx[f] += dp_in;
  d_gx[d + f] += dp_fo;
  d_item[f] = gi * fo;
  const float dz = gi * in * (1.0f - w * w);
  d_a_col[f] += dz * a_e;
  return dz * a[f];
}

// Row e backward; returns Σ_f ∂Z[e, f] a_f, summed in kLanes partial sums (vectorisable and deterministic).
RLM_ALWAYS_INLINE float backward_row(const float* __restrict g, const float* __restrict gates,
                                     const float* __restrict write, const float* __restrict a, float a_e,
                                     const float* __restrict item, int64_t d, float* __restrict d_pre,
                                     float* __restrict d_gx, float* __restrict d_a_col, float* __restrict d_item) {
  float lanes[kLanes] = {};
  int64_t f = 0;
  for (; f + kLanes <= d; f += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += backward_element(f + l, g, gates, write, a, a_e, item, d, d_pre, d_gx, d_a_col, d_item);
  float tail = 0.0f;
  for (; f < d; ++f) tail += backward_element(f, g, gates, write, a, a_e, item, d, d_pre, d_gx, d_a_col, d_item);
  return simd::add_lanes(tail, lanes);
}

RLM_ALWAYS_INLINE void item_write_forward(const float* pre, const float* gate_x, const float* a, const float* item,
                                          int64_t batch, int64_t d, float* gates, float* write, float* out) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* ab = a + b * d;
    for (int64_t e = 0; e < d; ++e) {
      const int64_t row = b * d + e;
      forward_row(pre + row * 2 * d, gate_x + b * 2 * d, ab, ab[e], item + row * d, d, gates + row * 2 * d,
                  write + row * d, out + row * d);
    }
  }
}

RLM_ALWAYS_INLINE void item_write_backward(const float* grad, const float* gates, const float* write, const float* a,
                                           const float* item, int64_t batch, int64_t d, float* d_pre, float* d_gx,
                                           float* d_a, float* d_item) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* ab = a + b * d;
    float* gx = d_gx + b * 2 * d;
    float* da = d_a + b * d;
    for (int64_t i = 0; i < 2 * d; ++i) gx[i] = 0.0f;
    for (int64_t i = 0; i < d; ++i) da[i] = 0.0f;
    for (int64_t e = 0; e < d; ++e) {
      const int64_t row = b * d + e;
      da[e] += backward_row(grad + row * d, gates + row * 2 * d, write + row * d, ab, ab[e], item + row * d, d,
                            d_pre + row * 2 * d, gx, da, d_item + row * d);
    }
  }
}

struct ItemWriteNode : torch::autograd::Function<ItemWriteNode> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& gate_pre,
                               const torch::Tensor& gate_x, const torch::Tensor& a, const torch::Tensor& item) {
    const int64_t batch = item.size(0), d = item.size(1);
    const auto pre = gate_pre.contiguous(), gx = gate_x.contiguous(), ac = a.contiguous(), m = item.contiguous();
    auto out = torch::empty_like(m);
    if (m.is_cuda()) {  // backward recomputes the gates and the write from the inputs: nothing more is stored
      stm_item_write_cuda_forward(pre, gx, ac, m, out);
      ctx->save_for_backward({pre, gx, ac, m});
      return out;
    }
    auto gates = torch::empty_like(pre), write = torch::empty_like(m);
    simd::dispatch<item_write_forward>(pre.data_ptr<float>(), gx.data_ptr<float>(), ac.data_ptr<float>(),
                                       m.data_ptr<float>(), batch, d, gates.data_ptr<float>(), write.data_ptr<float>(),
                                       out.data_ptr<float>());
    ctx->save_for_backward({gates, write, ac, m});
    return out;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &a = saved[2], &item = saved[3];
    const int64_t batch = item.size(0), d = item.size(1);
    const auto g = grads[0].contiguous();
    auto d_pre = torch::empty({batch, d, 2 * d}, item.options()),
         d_gx = torch::empty({batch, 1, 2 * d}, item.options());
    auto d_a = torch::empty_like(a), d_item = torch::empty_like(item);
    if (item.is_cuda()) {  // saved: P and g, from which the kernel recomputes the gates and the write
      stm_item_write_cuda_backward(g, saved[0], saved[1], a, item, d_pre, d_gx, d_a, d_item);
      return {d_pre, d_gx, d_a, d_item};
    }
    const torch::Tensor &gates = saved[0], &write = saved[1];
    simd::dispatch<item_write_backward>(g.data_ptr<float>(), gates.data_ptr<float>(), write.data_ptr<float>(),
                                        a.data_ptr<float>(), item.data_ptr<float>(), batch, d, d_pre.data_ptr<float>(),
                                        d_gx.data_ptr<float>(), d_a.data_ptr<float>(), d_item.data_ptr<float>());
    return {d_pre, d_gx, d_a, d_item};
  }
};

}  // namespace

torch::Tensor stm_item_write(const torch::Tensor& gate_pre, const torch::Tensor& gate_x, const torch::Tensor& a,
                             const torch::Tensor& item) {
  TORCH_CHECK((item.is_cpu() || item.is_cuda()) && item.scalar_type() == torch::kFloat,
              "stm_item_write: float32 on the CPU or a CUDA device");
  return ItemWriteNode::apply(gate_pre, gate_x, a, item);
}

#ifndef RLM_HAVE_CUDA
void stm_item_write_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                 at::Tensor&) {
  TORCH_CHECK(false, "stm_item_write: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}

void stm_item_write_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                  const at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "stm_item_write: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
#endif

}  // namespace rlm::memory
