#include "memory/gru.hpp"

namespace rlm::memory {

Gru::Gru(int64_t input_size, int64_t hidden_size) : hidden_size_(hidden_size) {
  gru_ = register_module("gru", torch::nn::GRU(torch::nn::GRUOptions(input_size, hidden_size).num_layers(1)));
}

MemoryState Gru::initial_state(int64_t batch, const torch::Device& device) const {
  return {{torch::zeros({batch, hidden_size_}, torch::TensorOptions().device(device))}};
}

// Resets inside a sequence: the sequence is cut into runs at every step where some episode starts, and the fused
// GRU runs once per run, zeroing the state of the entries that start there (popgym's forward_gru does the same).
// Training batches start every sequence at t = 0 and never reset inside, so they take a single fused call.
MemoryOutput Gru::forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  const int64_t steps = x.size(0);
  TORCH_CHECK(starts.dim() == 2 && starts.size(0) == steps && starts.size(1) == x.size(1),
              "Gru: starts must be [T, B] matching x");
  torch::Tensor h = state.tensors.at(0);
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
