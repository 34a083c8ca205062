#include "memory/gru.hpp"

#include "nn/linear.hpp"

namespace rlm::memory {

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
  if (x.device().is_cpu() && x.scalar_type() == torch::kFloat && nn::onednn_linear_enabled())
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
  // unbind and chunk, not indexing or narrow: their backward sums the pieces' gradients once, where a select or
  // narrow per step would add a zero-filled full-size gradient per step (quadratic in T).
  const auto gi_steps = gi.unbind(0);
  torch::Tensor h = h0;
  std::vector<torch::Tensor> outputs;
  outputs.reserve(static_cast<size_t>(steps));
  for (int64_t t = 0; t < steps; ++t) {
    if (any_start_ptr[t]) h = h * keep[t];
    const auto gi_t = gi_steps[static_cast<size_t>(t)].chunk(3, 1);  // r, z, n
    const auto gh_t = nn::linear(h, w_hh, b_hh).chunk(3, 1);
    const auto r = torch::sigmoid(gi_t[0] + gh_t[0]);
    const auto z = torch::sigmoid(gi_t[1] + gh_t[1]);
    const auto n = torch::tanh(gi_t[2] + r * gh_t[2]);
    h = n + z * (h - n);
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
