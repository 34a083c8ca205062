#include "nn/linear.hpp"

#include <ATen/core/dispatch/Dispatcher.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/cpu_isa.hpp"

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

/// a·Wᵀ (+ bias) for a [M, K] and W [N, K], any strides: libtorch's oneDNN inner product, in the operands' dtype
/// (float32, or bfloat16 with a float32 bias that oneDNN adds to its float32 sums before it rounds the result).
torch::Tensor onednn_affine(const torch::Tensor& a, const torch::Tensor& w, const std::optional<torch::Tensor>& bias) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("mkldnn::_linear_pointwise", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&, std::string_view,
                            c10::List<std::optional<at::Scalar>>, std::optional<std::string_view>)>();
  return op.call(a, w, bias, "none", c10::List<std::optional<at::Scalar>>(), std::nullopt);
}

torch::Tensor to_bf16(const torch::Tensor& t) { return t.to(at::kBFloat16); }

/// A weight rounded to bfloat16, reused while that tensor lives and is unchanged: per minibatch the GRU's W_hh enters
/// ~50 products forward and ~50 backward, and while acting every layer's weight enters one product per step, each of
/// which would otherwise round the whole matrix again. A tensor is unchanged while its version counter (bumped by
/// every in-place write: the optimiser's step, a checkpoint's load), storage, offset, sizes and strides are; the
/// entry holds a weak reference, so a freed tensor's address can not be mistaken for a live one. Views of one weight
/// (W_hhᵀ) are separate entries. Inference tensors have no version counter and are rounded each time.
torch::Tensor cached_bf16(const torch::Tensor& w) {
  if (w.is_inference()) return to_bf16(w);
  struct Entry {
    c10::weak_intrusive_ptr<c10::TensorImpl> owner;
    uint32_t version;
    const void* data;
    std::vector<int64_t> sizes, strides;
    torch::Tensor rounded;
  };
  static std::mutex mutex;
  static std::unordered_map<const c10::TensorImpl*, Entry> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto version = w.unsafeGetTensorImpl()->version_counter().current_version();
  const auto found = cache.find(w.unsafeGetTensorImpl());
  if (found != cache.end() && !found->second.owner.expired() && found->second.version == version &&
      found->second.data == w.data_ptr() && w.sizes().equals(found->second.sizes) &&
      w.strides().equals(found->second.strides))
    return found->second.rounded;
  std::erase_if(cache, [](const auto& entry) { return entry.second.owner.expired(); });  // and their copies with them
  auto rounded = to_bf16(w);
  cache.insert_or_assign(w.unsafeGetTensorImpl(),
                         Entry{c10::weak_intrusive_ptr<c10::TensorImpl>(w.getIntrusivePtr()), version, w.data_ptr(),
                               w.sizes().vec(), w.strides().vec(), rounded});
  return rounded;
}

/// ΔW = Δyᵀ·x for Δy [M, N] and x [M, K] of one dtype, as float32. In float32 with the wider of N and K as oneDNN's
/// weight operand. In bfloat16 through at::mm, which libtorch hands to oneDNN's matmul with the transposed operand
/// read in place: the inner product op copies its transposed input first (8192 × 128·768: 3.6 against 4.1 ms; 8192 ×
/// 128·128: 0.6 against 1.0 ms on the dev VM), while at float32 at::mm would be MKL's.
torch::Tensor oriented_weight_gradient(const torch::Tensor& gy, const torch::Tensor& x) {
  if (gy.scalar_type() == at::kBFloat16) return at::mm(gy.t(), x).to(at::kFloat);
  if (gy.size(1) >= x.size(1)) return onednn_affine(x.t(), gy.t(), std::nullopt).t().contiguous();  // (xᵀ·Δy)ᵀ
  return onednn_affine(gy.t(), x.t(), std::nullopt);
}

/// Δx = Δy·W and ΔW = Δyᵀ·x (each only when needed), through oneDNN as the forward. Under bf16 products the saved x
/// is already bfloat16 (rounded once, in the forward) and Δy is rounded once for both products.
torch::autograd::tensor_list linear_gradients(torch::autograd::AutogradContext* ctx, const torch::Tensor& grad_y) {
  const auto saved = ctx->get_saved_variables();
  const torch::Tensor &x = saved[0], &w = saved[1];
  const bool bf16 = x.scalar_type() == at::kBFloat16;
  const torch::Tensor gy = bf16 ? to_bf16(grad_y).contiguous() : grad_y.contiguous();  // [M, N]
  torch::Tensor gx, gw;
  if (ctx->needs_input_grad(0)) gx = onednn_affine(gy, (bf16 ? cached_bf16(w) : w).t(), std::nullopt).to(at::kFloat);
  if (ctx->needs_input_grad(1)) gw = oriented_weight_gradient(gy, x);
  return {gx, gw};
}

/// y = x·Wᵀ (+ b) for 2-D float32 x, saving what the gradients need: x and W, x in bfloat16 under bf16 products.
torch::Tensor linear_forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                             const std::optional<torch::Tensor>& b) {
  if (!onednn_bf16()) {
    ctx->save_for_backward({x, w});
    return onednn_affine(x, w, b);
  }
  const auto xb = to_bf16(x);
  ctx->save_for_backward({xb, w});
  return onednn_affine(xb, cached_bf16(w), b).to(at::kFloat);
}

/// y = x·Wᵀ + b for 2-D x. (Two functions: autograd takes no undefined tensor among a function's inputs.)
struct OneDnnLinear : torch::autograd::Function<OneDnnLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& w,
                               const torch::Tensor& b) {
    return linear_forward(ctx, x, w, b);
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
    return linear_forward(ctx, x, w, std::nullopt);
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
  // Both extend AVX-512, so RLM_MAX_CPU_ISA below avx512 hides them as it hides AVX-512 itself.
#if defined(__clang__) && __clang_major__ < 16
  // Older clang does not know the name "amx-bf16"; every CPU with AMX-BF16 so far (Sapphire Rapids on) also has
  // AVX512-BF16.
  return usable_cpu_isa() == CpuIsa::avx512 && __builtin_cpu_supports("avx512bf16");
#else
  return usable_cpu_isa() == CpuIsa::avx512 &&
         (__builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16"));
#endif
#else
  return false;
#endif
}

bool onednn_bf16_available() {
  static const bool available = [] {
    if (!at::hasMKLDNN()) return false;
    try {
      const auto one = torch::ones({1, 1}, torch::kBFloat16);
      onednn_affine(one, one, std::nullopt);
      return true;
    } catch (const std::exception&) {  // dnnl::error "could not create a primitive descriptor": none for this CPU
      return false;
    }
  }();
  return available;
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
  if (onednn_bf16()) return oriented_weight_gradient(to_bf16(grad_y), to_bf16(x));
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
