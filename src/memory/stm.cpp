#include "memory/stm.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "memory/stm_cuda_kernels.hpp"
#include "memory/stm_item_write.hpp"
#include "memory/stm_relational_write.hpp"
#include "nn/linear.hpp"
#include "nn/tanh.hpp"

namespace rlm::memory {
namespace {

void check_positive(int64_t value, const char* name) {
  if (value <= 0) throw ConfigError(std::string("stm: ") + name + " must be positive, got " + std::to_string(value));
}

// Entries where `mask` ([B, 1, ...] bool) is true take the initial state: `init` (broadcast over the batch) or zero.
torch::Tensor reset(const torch::Tensor& current, const torch::Tensor& init, const torch::Tensor& mask) {
  return init.defined() ? torch::where(mask, init, current) : current.masked_fill(mask, 0.0);
}

}  // namespace

Stm::Stm(int64_t input_size, const StmOptions& options) : options_(options) {
  const auto& o = options_;
  check_positive(input_size, "input size");
  check_positive(o.item_size, "item_size");
  check_positive(o.num_slots, "num_slots");
  check_positive(o.rel_size, "rel_size");
  check_positive(o.out_att_size, "out_att_size");
  if (o.mlp_size < 0) throw ConfigError("stm: mlp_size must be >= 0 (0 = no head)");
  if (o.mlp_size > 0) check_positive(o.output_size, "output_size");
  const int64_t d = o.item_size, nq = o.num_slots;
  const bool alpha1_zero = o.alpha1 && *o.alpha1 == 0.0, alpha2_zero = o.alpha2 && *o.alpha2 == 0.0;
  // With alpha1 and alpha2 both fixed at 0, M^r_{t-1} influences nothing: that is the non-carried model.
  carries_relational_ = o.carry_relational && !(alpha1_zero && alpha2_zero);
  reads_relational_ = carries_relational_ && !alpha2_zero;
  const bool transfers = !(o.alpha3 && *o.alpha3 == 0.0);

  using rlm::nn::Linear;
  using torch::nn::LayerNorm;
  using torch::nn::LayerNormOptions;
  std::vector<Linear> linears;
  auto linear = [&](const char* name, int64_t in, int64_t out) {
    auto layer = register_module(name, Linear(in, out));
    linears.emplace_back(layer);
    return layer;
  };

  f1_ = linear("f1", input_size, d);
  if (reads_relational_) {
    f2_ = linear("f2", input_size, d);
    f3_ = linear("f3", input_size, nq);
  }
  if (o.gated) {
    gate_in_ = linear("gate_in", d, 2 * d);
    gate_mem_ = linear("gate_mem", d, 2 * d);
    input_bias_ = register_parameter("input_bias", torch::zeros({}));
    forget_bias_ = register_parameter("forget_bias", torch::ones({}));
  }
  qkv_ = linear("qkv", d, 3 * nq);
  switch (o.qkv_norm) {
    case StmOptions::QkvNorm::kMatrix:
      qkv_ln_ = register_module("qkv_ln", LayerNorm(LayerNormOptions({d, 3 * nq})));
      break;
    case StmOptions::QkvNorm::kRow:
      qkv_ln_ = register_module("qkv_ln", LayerNorm(LayerNormOptions({3 * nq})));
      break;
    case StmOptions::QkvNorm::kVector:
      qkv_ln_weight_ = register_parameter("qkv_ln_weight", torch::ones({3, 1, d}));
      qkv_ln_bias_ = register_parameter("qkv_ln_bias", torch::zeros({3, 1, d}));
      break;
  }
  if (transfers) g1_ = linear("g1", nq * d, d);
  g2_ = linear("g2", d * d, o.rel_size);
  g3_ = linear("g3", nq * o.rel_size, o.out_att_size);
  if (o.output_layernorm) out_ln_ = register_module("out_ln", LayerNorm(LayerNormOptions({o.out_att_size})));
  if (o.mlp_size > 0) {
    head1_ = linear("head1", o.out_att_size, o.mlp_size);
    head2_ = linear("head2", o.mlp_size, o.mlp_size);
    head_out_ = linear("head_out", o.mlp_size, o.output_size);
    output_width_ = o.output_size;
  } else {
    output_width_ = o.out_att_size;
  }
  if (carries_relational_ && !o.alpha1) alpha1_ = register_parameter("alpha1", torch::zeros({1}));
  if (reads_relational_ && !o.alpha2) alpha2_ = register_parameter("alpha2", torch::zeros({1}));
  if (transfers && !o.alpha3) alpha3_ = register_parameter("alpha3", torch::zeros({1}));

  torch::NoGradGuard no_grad;
  if (o.init == StmOptions::Init::kGlorot) {
    for (auto& layer : linears) {
      torch::nn::init::xavier_uniform_(layer->weight);
      torch::nn::init::zeros_(layer->bias);
    }
  }  // kTorch: rlm::nn::Linear's own default is PyTorch's
  if (o.learn_init_state) {
    const double item_bound = 1.0 / std::sqrt(2.0 * static_cast<double>(d));
    item0_ = register_parameter("item_init", torch::empty({d, d}).uniform_(-item_bound, item_bound));
    if (carries_relational_) {
      const double rel_bound = 1.0 / std::sqrt(2.0 * static_cast<double>(d) + static_cast<double>(nq));
      rel0_ = register_parameter("rel_init", torch::empty({nq, d, d}).uniform_(-rel_bound, rel_bound));
    }
  }
}

MemoryState Stm::initial_state(int64_t batch, const torch::Device& device) const {
  const int64_t d = options_.item_size, nq = options_.num_slots;
  const auto opts = f1_->weight.options().device(device);
  MemoryState state;
  state.tensors.push_back(item0_.defined() ? item0_.to(device).unsqueeze(0).expand({batch, d, d}).contiguous()
                                           : torch::zeros({batch, d, d}, opts));
  if (carries_relational_) {
    state.tensors.push_back(rel0_.defined() ? rel0_.to(device).unsqueeze(0).expand({batch, nq, d, d}).contiguous()
                                            : torch::zeros({batch, nq, d, d}, opts));
  }
  return state;
}

torch::Tensor Stm::alpha(const torch::Tensor& param, const std::optional<double>& fixed,
                         const torch::Tensor& like) const {
  if (param.defined()) return param;
  return torch::full({1}, fixed.value_or(0.0), like.options());
}

MemoryOutput Stm::forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  const auto& o = options_;
  TORCH_CHECK(x.dim() == 3 && x.size(0) > 0, "Stm: x must be [T, B, D] with T > 0");
  const int64_t steps = x.size(0), batch = x.size(1), d = o.item_size, nq = o.num_slots;
  TORCH_CHECK(starts.dim() == 2 && starts.size(0) == steps && starts.size(1) == batch,
              "Stm: starts must be [T, B] matching x");
  TORCH_CHECK(state.tensors.size() == (carries_relational_ ? 2u : 1u), "Stm: wrong number of state tensors");

  // Everything that depends on x alone, for all T at once: f1(x), f2(x), softmax(f3(x)) in one matmul, and the
  // gates' x-term with all gate biases folded in.
  const auto flat_x = x.reshape({steps * batch, x.size(2)});
  torch::Tensor item_in, read_in, read_weight;  // f1(x), f2(x), softmax(f3(x)): [T*B, d], [T*B, d], [T*B, nq]
  if (reads_relational_) {
    const auto weight = torch::cat({f1_->weight, f2_->weight, f3_->weight});
    const auto bias = torch::cat({f1_->bias, f2_->bias, f3_->bias});
    const auto proj = nn::linear(flat_x, weight, bias);
    item_in = proj.narrow(1, 0, d);
    read_in = proj.narrow(1, d, d);
    read_weight = torch::softmax(proj.narrow(1, 2 * d, nq), -1);
  } else {
    item_in = f1_->forward(flat_x);
  }
  // Per-step pieces are unbound once: indexing [t] in the loop would make autograd scatter each step's gradient
  // into a zero tensor of the whole sequence (O(T^2) in the backward pass).
  std::vector<torch::Tensor> gate_x;  // T x [B, 1, 2d]
  torch::Tensor gate_mem_weight;      // Wg_mem [2d, d]
  if (o.gated) {
    const auto scalar_bias = torch::cat({input_bias_.expand({d}), forget_bias_.expand({d})});
    gate_x = nn::linear(item_in, gate_in_->weight, gate_in_->bias + gate_mem_->bias + scalar_bias)
                 .view({steps, batch, 1, 2 * d})
                 .unbind(0);
    gate_mem_weight = gate_mem_->weight;
  }
  const auto item_in_steps = item_in.view({steps, batch, d}).unbind(0);  // T x [B, d]

  torch::Tensor alpha1, transfer_weight, transfer_bias;
  // T x [B, 1, nq*d] the read's weights p[s] f2[a], [B, 1, d] alpha2 f2(x)
  std::vector<torch::Tensor> read_weight_steps, scaled_read_in_steps;
  if (carries_relational_) {
    alpha1 = alpha(alpha1_, o.alpha1, x);
    if (o.alpha1_clamp) alpha1 = alpha1.clamp(0.0, 1.0);
  }
  if (reads_relational_) {
    // S = M^i + alpha2 * v^r (x) f2(x): alpha2 is folded into the right-hand factor.
    scaled_read_in_steps = (read_in * alpha(alpha2_, o.alpha2, x)).view({steps, batch, 1, d}).unbind(0);
    read_weight_steps = (read_weight.view({steps * batch, nq, 1}) * read_in.view({steps * batch, 1, d}))
                            .view({steps, batch, 1, nq * d})
                            .unbind(0);
  }
  if (g1_) {  // M^i += alpha3 * G1(R0): alpha3 is folded into G1's weight and bias
    const auto alpha3 = alpha(alpha3_, o.alpha3, x);
    transfer_weight = g1_->weight * alpha3;  // [d, nq*d]
    transfer_bias = g1_->bias * alpha3;      // [d]
  }
  // The per-step products with a weight go through nn::linear (oneDNN on the CPU: nn/linear.hpp).

  torch::Tensor item = state.tensors[0];
  torch::Tensor rel = carries_relational_ ? state.tensors[1] : torch::Tensor();
  const auto any_start = starts.any(1).to(torch::kCPU);
  const auto* any_start_ptr = any_start.data_ptr<bool>();

  // In float32 on the CPU, and on a GPU at sizes its kernels take, the gated M^i write and the relational write are
  // fused nodes (stm_item_write.hpp, stm_relational_write.hpp); elsewhere (and in double, the tests' reference)
  // torch's ops.
  const bool fused =
      x.scalar_type() == torch::kFloat && (x.is_cpu() || (x.is_cuda() && stm_cuda_fusable(d, nq, x.device().index())));
  torch::Tensor next_read;               // v^r of the coming step, where the fused write summed it
  std::vector<torch::Tensor> distilled;  // G2 output per step, [B, nq*nr]
  distilled.reserve(steps);
  for (int64_t t = 0; t < steps; ++t) {
    if (any_start_ptr[t]) {
      const auto mask = starts[t].view({batch, 1, 1});
      item = reset(item, item0_, mask);
      if (rel.defined()) rel = reset(rel, rel0_, mask.unsqueeze(-1));
    }
    const auto& a = item_in_steps[t];  // [B, d]

    // M^i write (SAM paper Eq. 10): gates from the old M^i (per row) plus the x-term broadcast over rows.
    torch::Tensor new_item;
    if (o.gated) {
      const auto pre = nn::linear(nn::tanh(item).reshape({batch * d, d}), gate_mem_weight).view({batch, d, 2 * d});
      if (fused) {
        new_item = stm_item_write(pre, gate_x[t], a, item);
      } else {
        const auto gates = torch::sigmoid(pre + gate_x[t]);
        const auto input_gate = gates.narrow(2, 0, d), forget_gate = gates.narrow(2, d, d);
        const auto write = torch::tanh(a.unsqueeze(2) * a.unsqueeze(1));
        new_item = torch::addcmul(input_gate * write, forget_gate, item);
      }
    } else {
      new_item = torch::baddbmm(item, a.unsqueeze(2), a.unsqueeze(1));
    }

    // M^r read from the old M^r: v^r[f] = sum_{s,e} p[s] f2[e] M^r[s, e, f], one row vector times [nq*d, d] per
    // batch entry (as a matrix times a column, MKL's batched product took 10x longer); S = M^i + alpha2 v^r (x) f2.
    // On the CPU the previous step's fused write already summed it (next_read below).
    torch::Tensor sam_in = new_item;
    if (reads_relational_) {
      const auto read = next_read.defined()
                            ? next_read
                            : torch::bmm(read_weight_steps[t], rel.view({batch, nq * d, d}));  // [B, 1, d]
      sam_in = torch::baddbmm(new_item, read.transpose(1, 2), scaled_read_in_steps[t]);
    }

    // SAM: Q, K, V = LN(S Wqkv^T + b) transposed to [B, 3nq, d] (the projection mixes the columns of S).
    auto qkv = nn::linear(sam_in.reshape({batch * d, d}), qkv_->weight, qkv_->bias).view({batch, d, 3 * nq});
    torch::Tensor qkv_t;  // [B, 3nq, d]
    if (qkv_ln_) {
      qkv_t = qkv_ln_->forward(qkv).transpose(1, 2).contiguous();  // so that the products below are too
    } else {
      const auto normed = torch::layer_norm(qkv.transpose(1, 2).reshape({batch, 3, nq, d}), {d});
      qkv_t = torch::addcmul(qkv_ln_bias_, normed, qkv_ln_weight_).view({batch, 3 * nq, d});
    }
    const auto query = qkv_t.narrow(1, 0, nq), key = qkv_t.narrow(1, nq, nq), value = qkv_t.narrow(1, 2 * nq, nq);
    // R0[s, a, c] = sum_j T[j, s, a] V[j, c] with the scores T[j, s, a] = tanh(Q[s, a] K[j, a]).
    const auto scores = nn::tanh(key.unsqueeze(2) * query.unsqueeze(1));  // [B, nkv, nq, d]: [j, s, a]

    // Transfer into M^i: M^i[c, e] += alpha3 (sum_{s,a} W1[e, (s, a)] R0[s, a, c] + b1[e]). With R0[s, a, c] =
    // sum_j T[j, s, a] V[j, c] the sum is taken over (s, a) first: P[j, e] = sum_{s,a} W1[e, (s, a)] T[j, s, a], then
    // sum_j V[j, c] P[j, e]. Same result up to float rounding, in nkv·nq·d² + nkv·d² multiply-adds instead of
    // nq·d³ (0.66M instead of 7.1M per step at d = 96, nq = nkv = 8: G1 was 42% of a step).
    if (g1_) {
      const auto per_key = nn::linear(scores.reshape({batch * nq, nq * d}), transfer_weight).view({batch, nq, d});
      new_item = torch::baddbmm(new_item, value.transpose(1, 2), per_key) + transfer_bias;
    }

    // M^r = alpha1 M^r + R0 (carried) or R0 (Atari code); R0 as one bmm over j, [B, nq*d, d] in M^r's layout, where
    // the fused node is not used.
    torch::Tensor new_rel;
    if (fused) {
      // With the next step's read of M^r_t, unless an episode starts there (its read is of the initial state).
      const bool reads_next = reads_relational_ && t + 1 < steps && !any_start_ptr[t + 1];
      auto written = stm_relational_write(scores, value, rel, carries_relational_ ? alpha1 : torch::Tensor(),
                                          reads_next ? read_weight_steps[t + 1] : torch::Tensor());
      new_rel = written.rel;
      next_read = written.next_read;
    } else {
      const auto sam = torch::bmm(scores.view({batch, nq, nq * d}).transpose(1, 2), value).view({batch, nq, d, d});
      new_rel = carries_relational_ ? torch::addcmul(sam, rel, alpha1) : sam;
    }

    // Output distillation G2, shared over slots: the columns of its weight are M^r[s]'s (a, c) flattened.
    distilled.push_back(
        nn::linear(new_rel.reshape({batch * nq, d * d}), g2_->weight, g2_->bias).view({batch, nq * o.rel_size}));
    item = new_item;
    if (carries_relational_) rel = new_rel;
  }

  // Output stage over all T * B at once: o = G3(...), LN(o), head.
  torch::Tensor y = g3_->forward(torch::stack(distilled));  // [T, B, no]
  if (out_ln_) y = out_ln_->forward(y);
  if (head1_) y = head_out_->forward(torch::relu(head2_->forward(torch::relu(head1_->forward(y)))));
  MemoryState out_state;
  out_state.tensors.push_back(item);
  if (carries_relational_) out_state.tensors.push_back(rel);
  return {y, std::move(out_state)};
}

}  // namespace rlm::memory
