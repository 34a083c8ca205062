#include "nn/tanh.hpp"

#include "scan/simd_clones.hpp"

namespace rlm::nn {
namespace {

RLM_ALWAYS_INLINE void tanh_floats(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = tanhf(x[i]);
}

struct Tanh : torch::autograd::Function<Tanh> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x) {
    const auto dense = x.contiguous();
    auto y = torch::empty_like(dense);
    simd::dispatch<tanh_floats>(dense.data_ptr<float>(), dense.numel(), y.data_ptr<float>());
    ctx->save_for_backward({y});
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    return {torch::tanh_backward(grads[0], ctx->get_saved_variables()[0])};
  }
};

}  // namespace

torch::Tensor tanh(const torch::Tensor& x) {
  if (!x.device().is_cpu() || x.scalar_type() != torch::kFloat) return torch::tanh(x);
  return Tanh::apply(x);
}

}  // namespace rlm::nn
