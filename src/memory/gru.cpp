#include "memory/gru.hpp"

#include "memory/gru_gates_cpu.hpp"
#include "nn/linear.hpp"

namespace rlm::memory {
namespace {

/// The GRU's recurrence over a whole sequence as one autograd node: from gi = x·W_ihᵀ + b_ih ([T, B, 3H], blocks
/// r, z, n; one GEMM for all steps, outside) and h0, per step gh = h·W_hhᵀ + b_hh and the gates (one pass per step
/// each way, gru_gates_cpu.hpp). The backward runs the steps in reverse with one [B, 3H]·[3H, H] GEMM each for ∂h,
/// then ∂W_hh = Σ_t ∂ghₜᵀ·hₜ₋₁ as a single GEMM over all T·B rows: as per-step autograd nodes, each step computed
/// and accumulated its own ∂W_hh from B rows (52 small GEMMs and 52 [3H, H] additions per minibatch at the POPGym
/// sizes). `keep` [T, B, 1] zeroes the state of entries that start an episode at t, on the steps `resets` (CPU bool
/// [T]) marks. CPU float32 only (Gru::forward takes torch's GRU elsewhere).
struct GruRecurrence : torch::autograd::Function<GruRecurrence> {
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& gi,
                                              const torch::Tensor& h0, const torch::Tensor& w_hh,
                                              const torch::Tensor& b_hh, const torch::Tensor& keep,
                                              const torch::Tensor& resets) {
    TORCH_CHECK(gi.scalar_type() == torch::kFloat && gi.device().is_cpu(), "GruRecurrence: CPU float32 only");
    const int64_t steps = gi.size(0), batch = h0.size(0), hidden = h0.size(1);
    const bool* reset = resets.data_ptr<bool>();
    const auto gi_dense = gi.contiguous();
    auto y = torch::empty({steps, batch, hidden}, h0.options());
    auto rz = torch::empty({steps, batch, 2 * hidden}, h0.options());  // [r | z] per step
    auto n = torch::empty_like(y), gh_n = torch::empty_like(y), h_prev = torch::empty_like(y);
    torch::Tensor h = h0;
    for (int64_t t = 0; t < steps; ++t) {
      auto hp = h_prev[t];
      if (reset[t]) {
        at::mul_out(hp, h, keep[t]);
      } else {
        hp.copy_(h);
      }
      const auto gh = nn::linear(hp, w_hh, b_hh).contiguous();
      auto y_t = y[t];
      gru_gates_forward(gi_dense[t].data_ptr<float>(), gh.data_ptr<float>(), hp.data_ptr<float>(), batch, hidden,
                        rz[t].data_ptr<float>(), n[t].data_ptr<float>(), gh_n[t].data_ptr<float>(),
                        y_t.data_ptr<float>());
      h = y_t;
    }
    ctx->save_for_backward({rz, n, gh_n, h_prev, w_hh, keep, resets});
    return {y, h.clone()};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rz = saved[0], &n = saved[1], &gh_n = saved[2], &h_prev = saved[3], &w_hh = saved[4];
    const torch::Tensor &keep = saved[5], &resets = saved[6];
    const bool* reset = resets.data_ptr<bool>();
    const int64_t steps = n.size(0), batch = n.size(1), hidden = n.size(2);
    const torch::Tensor dy = grads[0].defined() ? grads[0].contiguous() : torch::Tensor();
    torch::Tensor dh = grads[1].defined() ? grads[1].clone(at::MemoryFormat::Contiguous) : torch::zeros_like(h_prev[0]);
    auto d_gi = torch::empty({steps, batch, 3 * hidden}, n.options());
    auto d_gh = torch::empty_like(d_gi);
    const auto w_hh_t = w_hh.t();
    auto dh_z = torch::empty_like(dh);
    for (int64_t t = steps - 1; t >= 0; --t) {
      if (dy.defined()) dh.add_(dy[t]);
      auto dgh = d_gh[t];
      gru_gates_backward(dh.data_ptr<float>(), rz[t].data_ptr<float>(), n[t].data_ptr<float>(),
                         gh_n[t].data_ptr<float>(), h_prev[t].data_ptr<float>(), batch, hidden,
                         d_gi[t].data_ptr<float>(), dgh.data_ptr<float>(), dh_z.data_ptr<float>());
      dh = nn::linear(dgh, w_hh_t).add_(dh_z);  // ∂hₜ₋₁ = ∂ghₜ·W_hh + ∂hₜ ⊙ z
      if (reset[t]) dh.mul_(keep[t]);
    }
    const auto d_gh_rows = d_gh.view({-1, 3 * hidden});
    const auto d_w_hh = nn::weight_gradient(d_gh_rows, h_prev.view({-1, hidden}));  // Σ_t ∂ghₜᵀ·hₜ₋₁
    return {d_gi, dh, d_w_hh, d_gh_rows.sum(0), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

Gru::Gru(int64_t input_size, int64_t hidden_size) : hidden_size_(hidden_size) {
  gru_ = register_module("gru", torch::nn::GRU(torch::nn::GRUOptions(input_size, hidden_size).num_layers(1)));
}

MemoryState Gru::initial_state(int64_t batch, const torch::Device& device) const {
  return {{torch::zeros({batch, hidden_size_}, torch::TensorOptions().device(device))}};
}

MemoryOutput Gru::forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  TORCH_CHECK(starts.dim() == 2 && starts.size(0) == x.size(0) && starts.size(1) == x.size(1),
              "Gru: starts must be [T, B] matching x");
  const torch::Tensor& h0 = state.tensors.at(0);
  const auto keep = (~starts).to(x.dtype()).unsqueeze(-1);  // [T, B, 1]: 0 where the state resets
  const auto resets = starts.any(1).to(torch::kCPU);        // [T]
  // On the CPU in float32 our step loop, whose gates are one vectorised pass each way (gru_gates_cpu.hpp), beats
  // torch's GRU at every size: at small ones its ~10 ops per step forward and ~20 backward cost more than the
  // arithmetic (Zen 3 VM, 1 thread: H = 64, 16 episodes of 120 steps, SAC's update 2x faster; the PPO learning-test
  // config 1.7x), at large ones the per-step GEMM goes to oneDNN (nn::linear).
  if (x.device().is_cpu() && x.scalar_type() == torch::kFloat) return forward_steps(x, h0, keep, resets);
  return forward_torch(x, h0, keep, resets);
}

// torch's GRU, step by step: gi = x·W_ihᵀ + b_ih for the whole sequence in one GEMM, then per step
// gh = h·W_hhᵀ + b_hh, r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r ⊙ gh_n), h' = n + z ⊙ (h − n)
// (= (1 − z) ⊙ n + z ⊙ h), the recurrence as one autograd node (GruRecurrence). The state of entries that start an
// episode at t is zeroed before step t.
MemoryOutput Gru::forward_steps(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& keep,
                                const torch::Tensor& resets) {
  const auto params = gru_->named_parameters(/*recurse=*/false);
  const auto gi = nn::linear(x, params["weight_ih_l0"], params["bias_ih_l0"]);  // [T, B, 3H]
  const auto out = GruRecurrence::apply(gi, h0, params["weight_hh_l0"], params["bias_hh_l0"], keep, resets);
  return {out[0], {{out[1]}}};
}

// Resets inside a sequence: the sequence is cut into runs at every step where some episode starts, and the fused
// GRU runs once per run, zeroing the state of the entries that start there. (POPGym's GRU needs no such cut: under
// RLlib no sequence crosses an episode start; proroklab/popgym@410d5aa:popgym/baselines/ray_models/ray_gru.py.)
// Training batches start every sequence at t = 0 and never reset inside, so they take a single fused call.
MemoryOutput Gru::forward_torch(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& keep,
                                const torch::Tensor& resets) {
  const int64_t steps = x.size(0);
  torch::Tensor h = h0;
  const auto* any_start_ptr = resets.data_ptr<bool>();

  std::vector<torch::Tensor> outputs;
  int64_t begin = 0;
  while (begin < steps) {
    int64_t end = begin + 1;
    while (end < steps && !any_start_ptr[end]) ++end;
    if (any_start_ptr[begin]) h = h * keep[begin];
    auto [y, h_n] = gru_->forward(x.slice(0, begin, end), h.unsqueeze(0));
    outputs.push_back(y);
    h = h_n.squeeze(0);
    begin = end;
  }
  torch::Tensor y = outputs.size() == 1 ? outputs.front() : torch::cat(outputs, 0);
  return {y, {{h}}};
}

}  // namespace rlm::memory
