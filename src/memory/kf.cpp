#include "memory/kf.hpp"

#include <cmath>

#include "core/error.hpp"
#include "nn/linear.hpp"
#include "scan/kf_scan.hpp"

namespace rlm::memory {
namespace {

constexpr double kObservationNoiseFloor = 1e-6;  // r = softplus(.) + 1e-6 (our choice: the paper names no map)
constexpr double kRmsEps = 1e-5;                 // RMSNorm of johnma2006/mamba-minimal@03de542:model.py

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// KfLayer

KfLayer::KfLayer(int64_t width, const KfOptions& options)
    : options_(options),
      n_(options.state_size),
      has_u_(options.variant != KfVariant::kf_u),
      has_kf_(options.variant != KfVariant::vssm) {
  if (!has_kf_ && options.process_noise == KfProcessNoise::input_dependent)
    throw ConfigError("model.memory.kf.process_noise: input_dependent needs variant kf or kf_u (vssm has no noise)");
  if (!has_kf_ && options.output_features == KfOutputFeatures::mean_cov)
    throw ConfigError("model.memory.kf.output_features: mean_cov needs variant kf or kf_u (vssm has no variance)");

  // Input projection channels, in order: u (kf, vssm), w and r̃ (kf, kf_u), q̃_t (input-dependent process noise).
  int64_t chunks = (has_u_ ? 1 : 0) + (has_kf_ ? 2 : 0);
  if (options.process_noise == KfProcessNoise::input_dependent) ++chunks;
  in_proj_ = register_module("in_proj", rlm::nn::Linear(width, chunks * n_));
  const bool with_cov = options.output_features == KfOutputFeatures::mean_cov;
  out_proj_ = register_module("out_proj", rlm::nn::Linear((with_cov ? 2 : 1) * n_, width));

  // HiPPO diagonal (KF paper Table 1; A_log as in mamba-minimal): Ã_n = −exp(A_log_n) = −(n + 1); B̃ = 1.
  torch::Tensor a_log = torch::log(torch::arange(1, n_ + 1, torch::kFloat32));
  torch::Tensor b_tilde = torch::ones({n_});
  if (options.learn_ab) {
    a_log_ = register_parameter("A_log", a_log);
    if (has_u_) b_tilde_ = register_parameter("B", b_tilde);
  } else {
    a_log_ = register_buffer("A_log", a_log);
    if (has_u_) b_tilde_ = register_buffer("B", b_tilde);
  }
  if (has_kf_) {
    // q = 1 at init: softplus(ln(e − 1)) = 1, exp(0) = 1.
    const double q_init = options.positive == KfPositive::softplus ? std::log(std::exp(1.0) - 1.0) : 0.0;
    q_raw_ = register_parameter("q", torch::full({n_}, q_init));
  }
  dt_raw_ = register_parameter("dt", torch::full({1}, options.dt_raw_init));
}

torch::Tensor KfLayer::positive(const torch::Tensor& raw) const {
  return options_.positive == KfPositive::softplus ? torch::softplus(raw) : torch::exp(raw);
}

KfLayer::Coefficients KfLayer::coefficients() const {
  // Zero-order hold (KF paper §4.2): a = exp(Δ Ã), β = (exp(Δ Ã) − 1) / Ã ⊙ B̃; recomputed every forward pass.
  const torch::Tensor a_cont = -torch::exp(a_log_);
  const torch::Tensor delta_a = torch::softplus(dt_raw_) * a_cont;
  Coefficients c;
  c.a = torch::exp(delta_a);
  if (has_u_) c.beta = torch::expm1(delta_a) / a_cont * b_tilde_;
  if (has_kf_) c.q = positive(q_raw_);
  return c;
}

int64_t KfLayer::state_tensors() const { return 1 + (has_kf_ ? 1 : 0) + (has_u_ && options_.input_lag == 1 ? 1 : 0); }

void KfLayer::initial_state(int64_t batch, const torch::TensorOptions& options, std::vector<torch::Tensor>& out) const {
  out.push_back(torch::zeros({batch, n_}, options));                                         // x⁺_{-1} = 0
  if (has_kf_) out.push_back(torch::ones({batch, n_}, options));                             // P⁺_{-1} = 1
  if (has_u_ && options_.input_lag == 1) out.push_back(torch::zeros({batch, n_}, options));  // u_{-1} = 0
}

torch::Tensor KfLayer::forward(const torch::Tensor& h, const torch::Tensor* state, const torch::Tensor& starts,
                               std::vector<torch::Tensor>& new_state) {
  const std::vector<torch::Tensor> parts = in_proj_->forward(h).split(n_, -1);
  size_t next = 0;
  torch::Tensor u = has_u_ ? parts[next++] : torch::Tensor();
  torch::Tensor w, r;
  if (has_kf_) {
    w = parts[next++];
    r = positive(parts[next++]) + kObservationNoiseFloor;
  }
  const Coefficients coef = coefficients();
  const torch::Tensor resets = starts.unsqueeze(-1);  // [T, B, 1]

  // Input lag 1 (KF paper Eq. 4 as written): the predict of step t uses u_{t-1}, with u_{-1} = 0 at an episode
  // start and the carried u otherwise.
  torch::Tensor u_prev_out;
  if (has_u_ && options_.input_lag == 1) {
    const torch::Tensor& u_prev = state[has_kf_ ? 2 : 1];
    u_prev_out = u[-1];
    u = torch::cat({u_prev.unsqueeze(0), u.slice(0, 0, u.size(0) - 1)});
    u = torch::where(resets, 0.0, u);
  }

  torch::Tensor features;
  if (!has_kf_) {
    // vSSM (KF paper App. B, the predict block only): x_t = a x_{t-1} + β u_t, x = 0 at an episode start.
    const torch::Tensor x = scan::diag_linear_scan(coef.a, coef.beta * u, state[0], starts);
    new_state.push_back(x[-1]);
    features = x;
  } else {
    scan::KfScanInputs in;
    in.a = coef.a;
    in.beta = coef.beta;
    in.q = options_.process_noise == KfProcessNoise::input_dependent ? positive(q_raw_ + parts[next++]) : coef.q;
    in.u = u;
    in.w = w;
    in.r = r;
    in.init_mean = state[0];
    in.init_var = state[1];
    in.starts = starts;
    const scan::KfScanOutput out = scan::kf_scan(in);
    new_state.push_back(out.mean[-1]);
    new_state.push_back(out.var[-1]);
    features = options_.output_features == KfOutputFeatures::mean_cov ? torch::cat({out.mean, out.var}, -1) : out.mean;
  }
  if (u_prev_out.defined()) new_state.push_back(u_prev_out);
  return out_proj_->forward(features);
}

// ---------------------------------------------------------------------------------------------------------------
// Kf

Kf::Kf(int64_t input_size, const KfOptions& options)
    : options_(options), width_(options.hidden_size > 0 ? options.hidden_size : input_size) {
  if (input_size < 1) throw ConfigError("Kf: input size must be at least 1");
  if (options.hidden_size < 0) throw ConfigError("model.memory.hidden_size: must be at least 1");
  if (options.state_size < 1) throw ConfigError("model.memory.kf.state_size: must be at least 1");
  if (options.num_layers < 1) throw ConfigError("model.memory.kf.num_layers: must be at least 1");
  if (options.input_lag != 0 && options.input_lag != 1) throw ConfigError("model.memory.kf.input_lag: must be 0 or 1");
  if (width_ != input_size) input_map_ = register_module("input_map", rlm::nn::Linear(input_size, width_));
  for (int64_t l = 0; l < options.num_layers; ++l)
    layers_.push_back(register_module("layer" + std::to_string(l), std::make_shared<KfLayer>(width_, options)));
  if (options.rms_norm) {
    const int64_t count = options.rms_norm_every_layer ? options.num_layers : 1;
    for (int64_t l = 0; l < count; ++l)
      norm_gains_.push_back(
          register_parameter(count == 1 ? "norm" : "norm" + std::to_string(l), torch::ones({width_})));
  }
}

MemoryState Kf::initial_state(int64_t batch, const torch::Device& device) const {
  const auto options = torch::TensorOptions().device(device).dtype(parameters().front().scalar_type());
  MemoryState state;
  for (const auto& layer : layers_) layer->initial_state(batch, options, state.tensors);
  return state;
}

torch::Tensor Kf::rms(const torch::Tensor& h, const torch::Tensor& gain) const {
  return h * torch::rsqrt(h.square().mean(-1, /*keepdim=*/true) + kRmsEps) * gain;
}

MemoryOutput Kf::forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  TORCH_CHECK(x.dim() == 3, "Kf: x must be [T, B, D]");
  TORCH_CHECK(starts.dim() == 2 && starts.size(0) == x.size(0) && starts.size(1) == x.size(1),
              "Kf: starts must be [T, B] matching x");
  int64_t expected = 0;
  for (const auto& layer : layers_) expected += layer->state_tensors();
  TORCH_CHECK(static_cast<int64_t>(state.tensors.size()) == expected, "Kf: state has ", state.tensors.size(),
              " tensors, expected ", expected);

  torch::Tensor h = input_map_ ? input_map_->forward(x) : x;
  MemoryOutput out;
  size_t offset = 0;
  for (size_t l = 0; l < layers_.size(); ++l) {
    h = layers_[l]->forward(h, state.tensors.data() + offset, starts, out.state.tensors);
    offset += static_cast<size_t>(layers_[l]->state_tensors());
    if (options_.rms_norm && options_.rms_norm_every_layer) h = rms(h, norm_gains_[l]);
  }
  if (options_.rms_norm && !options_.rms_norm_every_layer) h = rms(h, norm_gains_.front());
  out.y = h;
  return out;
}

}  // namespace rlm::memory
