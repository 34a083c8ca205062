#include "nn/linear.hpp"

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace rlm::nn {
namespace {

bool default_enabled() {
  const char* choice = std::getenv("RLM_CPU_GEMM");
  return at::hasMKLDNN() && !(choice != nullptr && std::strcmp(choice, "mkl") == 0);
}

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{default_enabled()};
  return flag;
}

std::atomic<bool>& bf16_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}

/// a·Wᵀ (+ bias) for a [M, K] and W [N, K], any strides: libtorch's oneDNN inner product. With onednn_bf16() the
/// float32 operands are rounded to bfloat16, oneDNN returns the product in bfloat16, and the float32 bias is added
/// to it after (which also makes the result float32 again).
torch::Tensor onednn_affine(const torch::Tensor& a, const torch::Tensor& w, const std::optional<torch::Tensor>& bias) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("mkldnn::_linear_pointwise", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, std::string_view,
                            c10::List<std::optional<at::Scalar>>, std::optional<std::string_view>)>();
  if (a.scalar_type() == at::kFloat && bf16_flag().load(std::memory_order_relaxed)) {
    const auto y = op.call(a.to(at::kBFloat16), w.to(at::kBFloat16), std::nullopt, "none",
                           c10::List<std::optional<at::Scalar>>(), std::nullopt);
    return bias ? at::add(*bias, y) : y.to(at::kFloat);  // bf16 + float32 bias promotes to float32
  }
  return op.call(a, w, bias, "none", c10::List<std::optional<at::Scalar>>(), std::nullopt);
}

torch::Tensor oriented_weight_gradient(const torch::Tensor& gy, const torch::Tensor& x) {
  if (gy.size(1) >= x.size(1)) return onednn_affine(x.t(), gy.t(), std::nullopt).t().contiguous();  // (xᵀ·Δy)ᵀ
  return onednn_affine(gy.t(), x.t(), std::nullopt);
}

/// Δx = Δy·W and ΔW = Δyᵀ·x (each only when needed), through oneDNN as the forward.
torch::autograd::tensor_list linear_gradients(torch::autograd::AutogradContext* ctx, const torch::Tensor& grad_y) {
  const auto saved = ctx->get_saved_variables();
  const torch::Tensor &x = saved[0], &w = saved[1];
  const torch::Tensor gy = grad_y.contiguous();  // [M, N]
  torch::Tensor gx, gw;
  if (ctx->needs_input_grad(0)) gx = onednn_affine(gy, w.t(), std::nullopt);
  if (ctx->needs_input_grad(1)) gw = oriented_weight_gradient(gy, x);
  return {gx, gw};
}

/// y = x·Wᵀ + b for 2-D x. (Two functions: autograd takes no undefined tensor among a function's inputs.)
struct OneDnnLinear : torch::autograd::Function<OneDnnLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b) {
    ctx->save_for_backward({x, w});
    return onednn_affine(x, w, b);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    auto out = linear_gradients(ctx, grads[0]);
    out.push_back(ctx->needs_input_grad(2) ? grads[0].sum(0) : torch::Tensor());
    return out;
  }
};

/// y = x·Wᵀ for 2-D x.
struct OneDnnLinearNoBias : torch::autograd::Function<OneDnnLinearNoBias> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w) {
    ctx->save_for_backward({x, w});
    return onednn_affine(x, w, std::nullopt);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    return linear_gradients(ctx, grads[0]);
  }
};

}  // namespace

bool onednn_linear_enabled() { return enabled_flag().load(std::memory_order_relaxed); }

void set_onednn_linear(bool enabled) { enabled_flag().store(enabled && at::hasMKLDNN()); }

bool onednn_bf16() { return bf16_flag().load(std::memory_order_relaxed); }

void set_onednn_bf16(bool enabled) { bf16_flag().store(enabled); }

bool cpu_has_native_bf16() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
#else
  return false;
#endif
}

bool onednn_linear_used(int64_t rows, int64_t in, int64_t out) {
  return onednn_linear_enabled() && rows * in * out >= kOneDnnMinMacs;
}

namespace {
/// Whether the product of x (its last dimension contracted, the rest rows) with `out` outputs takes oneDNN.
bool onednn_takes(const torch::Tensor& x, int64_t out) {
  return x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.dim() >= 1 && x.numel() > 0 &&
         onednn_linear_used(x.numel() / x.size(-1), x.size(-1), out);
}
}  // namespace

torch::Tensor weight_gradient(const torch::Tensor& grad_y, const torch::Tensor& x) {
  if (!onednn_takes(x, grad_y.size(1))) return grad_y.t().mm(x);
  return oriented_weight_gradient(grad_y, x);
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!onednn_takes(x, weight.size(0))) return torch::linear(x, weight, bias);
  auto sizes = x.sizes().vec();
  // Dense rows: for rows with a stride (a narrow of a wider tensor) oneDNN picks its scalar reference kernel, which
  // took 20% of an SHM POPGym run on a head's 64 × 64 layer reading half of the actor-critic's fused first layer.
  const auto x2d = x.reshape({-1, sizes.back()}).contiguous();
  torch::Tensor y = bias.defined() ? OneDnnLinear::apply(x2d, weight, bias) : OneDnnLinearNoBias::apply(x2d, weight);
  sizes.back() = weight.size(0);
  return y.view(sizes);
}

torch::Tensor linear_after_affine(const torch::Tensor& read, const torch::Tensor& w1, const torch::Tensor& b1,
                                  const torch::Tensor& w2, const torch::Tensor& b2) {
  if (!w1.defined()) return linear(read, w2, b2);
  const int64_t k = w1.size(1), m = w1.size(0), n = w2.size(0);
  const int64_t rows = k > 0 ? read.numel() / k : 0;
  if (n * m * k + rows * n * k >= rows * m * (k + n)) return linear(linear(read, w1, b1), w2, b2);
  const auto product = torch::matmul(w2, w1);  // [n, k]
  torch::Tensor bias = b2;
  if (b1.defined()) bias = b2.defined() ? torch::addmv(b2, w2, b1) : torch::mv(w2, b1);
  return linear(read, product, bias);
}

}  // namespace rlm::nn
