#include "memory/gru.hpp"

#include "nn/linear.hpp"

namespace rlm::memory {
namespace {

/// One GRU step's gates as a single autograd node: h' from gi = x·W_ihᵀ + b_ih and gh = h·W_hhᵀ + b_hh (both
/// [B, 3H], blocks r, z, n) and h. As separate torch ops the step was 12 autograd nodes with their saved tensors and
/// allocations; here the forward is 5 kernels and the backward 9.
struct GruGates : torch::autograd::Function<GruGates> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& gi, const torch::Tensor& gh,
                               const torch::Tensor& h) {
    const int64_t hidden = h.size(1);
    const auto rz = torch::sigmoid(gi.narrow(1, 0, 2 * hidden) + gh.narrow(1, 0, 2 * hidden));  // [r | z]
    const auto r = rz.narrow(1, 0, hidden), z = rz.narrow(1, hidden, hidden);
    const auto gh_n = gh.narrow(1, 2 * hidden, hidden);
    const auto n = torch::addcmul(gi.narrow(1, 2 * hidden, hidden), r, gh_n).tanh_();
    auto h_new = torch::addcmul(n, z, h - n);  // (1 − z) ⊙ n + z ⊙ h
    ctx->save_for_backward({rz, n, gh, h});
    return h_new;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rz = saved[0], &n = saved[1], &gh = saved[2], &h = saved[3];
    const int64_t hidden = h.size(1);
    const auto r = rz.narrow(1, 0, hidden), z = rz.narrow(1, hidden, hidden);
    const auto& dh_new = grads[0];
    // d(pre-activation) of each block: n: dh'(1 − z)(1 − n²); z: dh'(h − n) z(1 − z); r: dn_pre gh_n r(1 − r).
    auto grad_gi = torch::empty_like(gh);
    auto d_r = grad_gi.narrow(1, 0, hidden), d_z = grad_gi.narrow(1, hidden, hidden);
    auto d_n = grad_gi.narrow(1, 2 * hidden, hidden);
    torch::mul_out(d_n, dh_new * (1 - z), 1 - n * n);
    torch::mul_out(d_z, dh_new * (h - n), z * (1 - z));
    torch::mul_out(d_r, d_n * gh.narrow(1, 2 * hidden, hidden), r * (1 - r));
    auto grad_gh = grad_gi.clone();
    grad_gh.narrow(1, 2 * hidden, hidden).mul_(r);
    return {grad_gi, grad_gh, dh_new * z};
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
  // The step loop pays off where its per-step GEMM goes to oneDNN; below that torch's fused CPU GRU is as fast.
  if (x.device().is_cpu() && x.scalar_type() == torch::kFloat &&
      nn::onednn_linear_used(x.size(1), hidden_size_, 3 * hidden_size_))
    return forward_steps(x, h0, starts);
  return forward_torch(x, h0, starts);
}

// torch's GRU, step by step: gi = x·W_ihᵀ + b_ih for the whole sequence in one GEMM, then per step
// gh = h·W_hhᵀ + b_hh, r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r ⊙ gh_n), h' = n + z ⊙ (h − n)
// (= (1 − z) ⊙ n + z ⊙ h). The state of entries that start an episode at t is zeroed before step t.
MemoryOutput Gru::forward_steps(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& starts) {
  const int64_t steps = x.size(0);
  const auto params = gru_->named_parameters(/*recurse=*/false);
  const auto gi = nn::linear(x, params["weight_ih_l0"], params["bias_ih_l0"]);  // [T, B, 3H]
  const auto& w_hh = params["weight_hh_l0"];
  const auto& b_hh = params["bias_hh_l0"];
  const auto keep = (~starts).to(x.dtype()).unsqueeze(-1);  // [T, B, 1]: 0 where the state resets
  const auto any_start = starts.any(1).to(torch::kCPU);
  const auto* any_start_ptr = any_start.data_ptr<bool>();
  // unbind, not indexing: its backward stacks the steps' gradients once, where a select per step would add a
  // zero-filled full-size gradient per step (quadratic in T).
  const auto gi_steps = gi.unbind(0);
  torch::Tensor h = h0;
  std::vector<torch::Tensor> outputs;
  outputs.reserve(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) {
    if (any_start_ptr[t]) h = h * keep[t];
    h = GruGates::apply(gi_steps[static_cast<size_t>(t)], nn::linear(h, w_hh, b_hh), h);
    outputs.push_back(h);
  }
  return {torch::stack(outputs), {{h}}};
}

// Resets inside a sequence: the sequence is cut into runs at every step where some episode starts, and the fused
// GRU runs once per run, zeroing the state of the entries that start there (popgym's forward_gru does the same).
// Training batches start every sequence at t = 0 and never reset inside, so they take a single fused call.
MemoryOutput Gru::forward_torch(const torch::Tensor& x, const torch::Tensor& h0, const torch::Tensor& starts) {
  const int64_t steps = x.size(0);
  torch::Tensor h = h0;
  const auto keep = (~starts).to(x.dtype()).unsqueeze(-1);  // [T, B, 1]: 0 where the state resets
  const auto any_start = starts.any(1).to(torch::kCPU);     // [T]
  const auto* any_start_ptr = any_start.data_ptr<bool>();

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
