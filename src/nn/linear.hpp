// Linear layers whose CPU GEMMs run on oneDNN instead of MKL.
//
// Why: libtorch's CPU matmul calls MKL, and MKL takes its AVX2 "zen" path on AMD CPUs even where they have full
// AVX-512 (Zen 4/5 EPYC, the Zen 5 VM), while oneDNN (also inside libtorch, as the mkldnn ops) dispatches on the CPU's
// features. On the Zen 5 VM, one thread, float32: x·Wᵀ for 8192×256 · 256×768 runs at 103 GFLOP/s through torch::linear
// and 236 GFLOP/s through oneDNN; the input gradient likewise, the weight gradient (Δyᵀ·x) at 174. Nearly all of a
// PPO update is these GEMMs (perf: 80% in MKL sgemm), so this is where a CPU run's time goes. On an AVX2-only CPU
// (Zen 3 VM, docs/BENCHMARKS.md) both libraries run AVX2 kernels and oneDNN still leads at the GEMM (58–72 against
// 44–57 GFLOP/s at the shapes above) while whole PPO iterations tie within noise, so oneDNN is the default on every
// CPU: one summation order per machine, no per-CPU choice to keep measured.
//
// rlm::nn::linear is torch::linear with a custom autograd function on the CPU in float32: the forward and both
// gradients are libtorch's `mkldnn::_linear_pointwise` op (oneDNN's inner product on plain strided tensors). The
// results are float32 GEMMs with another summation order (≈1e-6 relative from MKL's), deterministic for a given
// machine and thread count. Elsewhere (CUDA, other dtypes, a libtorch without oneDNN) it is torch::linear.
// RLM_CPU_GEMM=mkl in the environment turns the oneDNN path off (A/B timing, bitwise comparisons with torch).
#pragma once
#include <torch/torch.h>

namespace rlm::nn {

/// y = x·Wᵀ + b over the last dimension of x, as torch::linear (bias may be undefined).
/// GEMMs below about a million multiply-adds stay on torch::linear: oneDNN's ~12 µs per call costs more than its
/// faster kernel saves there (Zen 5 VM: 0.2× at 8×32×96, 0.9× at 64×64×192, 1.2× at 1.6M, 1.9× at 12.6M).
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});

/// linear(read·w1ᵀ + b1, w2, b2): a linear layer after an affine map (memory::AffineOutput), through the product
/// w2·w1 when that costs fewer multiply-adds for read's rows than forming the intermediate: n·m·k + rows·n·k against
/// rows·m·(k + n) for w1 [m, k], w2 [n, m]. Training batches take the product (SHM at H = 64: 64·1024·(64 + 128)
/// multiply-adds per token become 128·64), single acting steps the direct way. The parameters' gradients are the
/// same either way (autograd runs through the product), up to float32 summation order. w1 undefined: linear(read).
torch::Tensor linear_after_affine(const torch::Tensor& read, const torch::Tensor& w1, const torch::Tensor& b1,
                                  const torch::Tensor& w2, const torch::Tensor& b2 = {});

/// ΔW = Δyᵀ·x for Δy [M, N] and x [M, K] (a Linear's weight gradient, summed over M rows), on oneDNN where
/// linear() would use it, with the wider of N and K as oneDNN's weight operand: 208 against 155 GFLOP/s for
/// N = 768, K = 256 at M = 8192 on the Zen 5 VM, and the other way round for N < K.
torch::Tensor weight_gradient(const torch::Tensor& grad_y, const torch::Tensor& x);

/// Whether CPU float32 linears take the oneDNN path (default: yes when libtorch has oneDNN and RLM_CPU_GEMM is not
/// "mkl"). set_onednn_linear switches it for the whole process (tests compare both paths).
bool onednn_linear_enabled();
void set_onednn_linear(bool enabled);

/// Whether the oneDNN products run in bfloat16: operands rounded to bf16, float32 sums (the forward's float32 bias
/// included), each result rounded to bf16 once and handed back as float32 (the experiment.cpu_matmul option). A
/// weight's rounded copy is kept until the weight changes; activations and gradients are rounded on each call. Off by
/// default; set_onednn_bf16 switches it for the whole process.
bool onednn_bf16();
void set_onednn_bf16(bool enabled);
/// Whether this CPU multiplies bfloat16 natively (AVX512-BF16 or AMX-BF16, and RLM_MAX_CPU_ISA does not cap it below
/// avx512); without it bf16 products are slower than float32.
bool cpu_has_native_bf16();
/// Whether oneDNN computes bf16 products here at all: natively, or emulated with AVX-512 where the CPU lacks
/// AVX512-BF16 (oneDNN needs at least AVX-512 or AVX2-VNNI-2 for bf16; under ONEDNN_MAX_CPU_ISA, what that allows).
/// Probed once with a 1×1 product.
bool onednn_bf16_available();

/// Whether a [rows, in] · [in, out] product goes through oneDNN: enabled and at least kOneDnnMinMacs multiply-adds.
constexpr int64_t kOneDnnMinMacs = int64_t{1} << 20;
bool onednn_linear_used(int64_t rows, int64_t in, int64_t out);

/// torch::nn::Linear (same options, parameters "weight"/"bias", same initialisation) whose forward is rlm::nn::linear.
class LinearImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;
  torch::Tensor forward(const torch::Tensor& input) { return rlm::nn::linear(input, weight, bias); }
};
TORCH_MODULE(Linear);

}  // namespace rlm::nn
