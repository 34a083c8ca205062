#include "memory/shm.hpp"

#include <cmath>

#include "core/error.hpp"
#include "nn/linear.hpp"
#include "scan/shm_scan.hpp"

namespace rlm::memory {
namespace {

// k and q: ReLU, then divided by (1e-5 + their sum), as thaihungle/SHM@651f9e2:popgym/baselines/ray_models/ray_shm.py.
torch::Tensor sum_normalised_relu(const torch::Tensor& x) {
  const auto r = torch::relu(x);
  return r / (1e-5 + r.sum(-1, /*keepdim=*/true));
}

bool one_of(const std::string& value, std::initializer_list<const char*> choices) {
  for (const char* c : choices)
    if (value == c) return true;
  return false;
}

}  // namespace

Shm::Shm(int64_t input_size, const ShmOptions& options) : options_(options) {
  const int64_t h = options.memory_size;
  if (!one_of(options.calibration, {"random_theta", "fixed_theta", "neural_theta", "fixed_c", "random_c", "ones"}))
    throw ConfigError("model.memory.shm.calibration: unknown value '" + options.calibration + "'");
  if (!one_of(options.theta_sampling, {"uniform", "index0_compat"}))
    throw ConfigError("model.memory.shm.theta_sampling: unknown value '" + options.theta_sampling + "'");
  if (h < 1 || options.output_size < 1 || options.num_thetas < 1)
    throw ConfigError("model.memory.shm: memory_size, output_size and num_thetas must be >= 1");

  norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({input_size})));
  // PyTorch's default Linear init depends only on fan_in, so one fused Linear has the distribution of the code's
  // five separate bias-free Linears (and the same parameter count).
  projections_ =
      register_module("projections", rlm::nn::Linear(torch::nn::LinearOptions(input_size, 4 * h + 1).bias(false)));
  if (options.calibration == "random_theta" || options.calibration == "fixed_theta") {
    const int64_t rows = options.calibration == "fixed_theta" ? 1 : options.num_thetas;
    // As ray_shm.py: created with rand, then xavier_uniform_ (fan_in = H, fan_out = L).
    theta_table_ = register_parameter("theta_table", torch::empty({rows, h}));
    torch::nn::init::xavier_uniform_(theta_table_);
  } else if (options.calibration == "neural_theta") {
    theta_net_ = register_module("theta_net", rlm::nn::Linear(input_size, h));  // SHM paper §4.4's FFW: one Linear
  } else if (options.calibration == "fixed_c") {
    // Init unstated in the SHM paper (our choice): xavier, like the θ table, so C starts near 1 with some spread.
    fixed_c_ = register_parameter("fixed_c", torch::empty({h, h}));
    torch::nn::init::xavier_uniform_(fixed_c_);
  }
  if (options.shortcut) shortcut_ = register_module("shortcut", rlm::nn::Linear(input_size, h));
  out_ = register_module("out", rlm::nn::Linear(h, options.output_size));
}

MemoryState Shm::initial_state(int64_t batch, const torch::Device& device) const {
  const int64_t h = options_.memory_size;
  return {{torch::zeros({batch, h, h}, torch::TensorOptions().device(device))}};
}

torch::Tensor Shm::draw_theta(const torch::Tensor& x_norm) {
  const int64_t steps = x_norm.size(0), batch = x_norm.size(1), h = options_.memory_size;
  if (options_.calibration == "neural_theta") return theta_net_->forward(x_norm);
  if (options_.calibration == "ones") return torch::zeros({steps, batch, h}, x_norm.options());
  if (options_.calibration == "fixed_theta" || options_.theta_sampling == "index0_compat")
    return theta_table_[0].expand({steps, batch, h});
  // A fresh row per (step, batch entry) at every call, from the generator the trainer seeds (Memory::draw_index).
  // Drawn in [T, B] order, so T one-step calls draw the same rows as one T-step call.
  const auto index = draw_index(options_.num_thetas, {steps, batch}, x_norm.device());
  return theta_table_.index_select(0, index.view({-1})).view({steps, batch, h});
}

MemoryOutput Shm::forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  auto out = forward_affine(x, state, starts);
  return {out_->forward(out.read), std::move(out.state)};
}

AffineOutput Shm::forward_affine(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  TORCH_CHECK(x.dim() == 3, "Shm: x must be [T, B, D], got ", x.sizes());
  TORCH_CHECK(starts.dim() == 2 && starts.size(0) == x.size(0) && starts.size(1) == x.size(1),
              "Shm: starts must be [T, B] matching x");
  const int64_t h = options_.memory_size;
  const auto x_norm = norm_->forward(x);
  const auto parts = projections_->forward(x_norm).split({h, h, h, h, 1}, -1);
  const auto k = sum_normalised_relu(parts[0]);
  const auto q = sum_normalised_relu(parts[1]);
  const auto& v = parts[2];
  const auto& vc = parts[3];
  const auto eta = torch::sigmoid(parts[4]).squeeze(-1);  // [T, B]

  MemoryOutput result;
  if (options_.calibration == "fixed_c" || options_.calibration == "random_c") {
    result = forward_full_calibration(x_norm, k, q, v, eta, state, starts);
  } else {
    const auto theta = draw_theta(x_norm);
    auto scanned = scan::shm_scan(theta, vc, eta, v, k, q, state.tensors.at(0), starts, options_.state_clamp);
    result = {scanned.y, {{scanned.m_last}}};
  }
  if (options_.shortcut) result.y = result.y + shortcut_->forward(x_norm);
  return {std::move(result.y), out_->weight, out_->bias, std::move(result.state)};  // the output layer is out_
}

// fixed_c / random_c: C is a full H×H matrix (not rank-1), so the fused op does not apply; a loop over time with a
// materialised C per step (an ablation of SHM paper §4.4: O(B·H²) per step, autograd keeps every state).
MemoryOutput Shm::forward_full_calibration(const torch::Tensor& x_norm, const torch::Tensor& k, const torch::Tensor& q,
                                           const torch::Tensor& v, const torch::Tensor& eta, const MemoryState& state,
                                           const torch::Tensor& starts) {
  const int64_t steps = x_norm.size(0), batch = x_norm.size(1), h = options_.memory_size;
  torch::Tensor m = state.tensors.at(0);
  const auto keep = (~starts).to(m.scalar_type()).view({steps, batch, 1, 1});
  std::vector<torch::Tensor> ys;
  for (int64_t t = 0; t < steps; ++t) {
    const auto calibration = options_.calibration == "fixed_c"
                                 ? 1 + torch::tanh(fixed_c_)
                                 : 1 + torch::tanh(draw_normal({batch, h, h}, m.options()));
    m = calibration * (m * keep[t]) + eta[t].view({batch, 1, 1}) * v[t].unsqueeze(2) * k[t].unsqueeze(1);
    if (options_.state_clamp > 0) m = m.clamp(-options_.state_clamp, options_.state_clamp);
    ys.push_back(torch::matmul(m, q[t].unsqueeze(2)).squeeze(2));
  }
  return {torch::stack(ys), {{m}}};
}

}  // namespace rlm::memory
