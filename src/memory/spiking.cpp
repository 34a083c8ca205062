// Spiking-gate cell (SDG): see spiking.hpp and docs/models/spiking.md.
#include "memory/spiking.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "memory/spiking_highway.hpp"
#include "nn/linear.hpp"
#include "scan/fused_ops_device.hpp"
#include "scan/linear_scan.hpp"

namespace rlm::memory {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Θ(z) forward; backward is the surrogate derivative times the incoming gradient (spiking paper §4.2).
struct SpikeFunction : torch::autograd::Function<SpikeFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& z, int64_t surrogate) {
    ctx->save_for_backward({z});
    ctx->saved_data["surrogate"] = surrogate;
    return (z >= 0).to(z.scalar_type());
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const torch::Tensor z = ctx->get_saved_variables()[0];
    const auto surrogate = static_cast<SpikingSurrogate>(ctx->saved_data["surrogate"].toInt());
    const torch::Tensor& g = grads[0];
    torch::Tensor dz;
    switch (surrogate) {
      case SpikingSurrogate::kAtan: {
        const auto pz = z * kPi;
        dz = g / (1 + pz * pz);
        break;
      }
      case SpikingSurrogate::kGaussian:
        dz = g * torch::exp(-0.5 * z * z) * (1.0 / std::sqrt(2.0 * kPi));
        break;
      case SpikingSurrogate::kNone:
        dz = torch::zeros_like(z);
        break;
    }
    return {dz, torch::Tensor()};
  }
};

void check(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("model.memory.spiking: " + message);
}

// N(0, std²) truncated at ±2·std, by inverting the normal CDF on the truncated range (TFPORL's LRU init).
void truncated_normal_(torch::Tensor& t, double std) {
  torch::NoGradGuard no_grad;
  const double lo = 0.5 * std::erfc(2.0 / std::sqrt(2.0));  // Φ(−2)
  auto u = torch::rand(t.sizes(), t.options()) * (1.0 - 2.0 * lo) + lo;
  t.copy_((torch::erfinv(2.0 * u - 1.0) * (std * std::sqrt(2.0))).clamp(-2.0 * std, 2.0 * std));
}

}  // namespace

torch::Tensor spike(const torch::Tensor& z, SpikingSurrogate surrogate) {
  return SpikeFunction::apply(z, static_cast<int64_t>(surrogate));
}

int64_t Spiking::parameter_count(int64_t input_size, const SpikingOptions& o) {
  const int64_t nh = o.hidden_size, nout = o.resolved_output_size();
  const bool lru = o.forget_gate == SpikingForgetGate::kLru;
  const int64_t proj = (lru ? 4 : 6) * nh;
  return proj * (input_size + 1)         // W_x (Re, Im), W_i, W_o [, W_c (Re, Im)], with biases
         + nout * (2 * nh + 1)           // W_y with bias
         + (o.shared_leak ? 1 : 2) * nh  // leak logits
         + (lru ? 2 * nh : 0);           // ν, φ of the LRU forget gate
}

Spiking::Spiking(int64_t input_size, const SpikingOptions& options) : options_(options), input_size_(input_size) {
  const auto& o = options_;
  check(input_size >= 1, "input size must be at least 1");
  check(o.hidden_size >= 1, "hidden_size must be at least 1");
  check(o.output_size >= 0, "output_size must be 0 (= hidden_size) or positive");
  check(o.leak_init > 0.0 && o.leak_init < 1.0, "leak_init must lie in (0, 1)");
  check(o.noise_low <= o.noise_high, "noise_low must not exceed noise_high");
  check(o.layer_norm_eps > 0.0, "layer_norm_eps must be positive");
  if (o.forget_gate == SpikingForgetGate::kLru)
    check(o.lru_r_min > 0.0 && o.lru_r_min <= o.lru_r_max && o.lru_r_max < 1.0,
          "LRU ring init needs 0 < lru_r_min <= lru_r_max < 1");

  const int64_t nh = o.hidden_size;
  const int64_t proj = (o.forget_gate == SpikingForgetGate::kLru ? 4 : 6) * nh;
  in_proj_ = register_module("in_proj", rlm::nn::Linear(input_size, proj));
  out_proj_ = register_module("out_proj", rlm::nn::Linear(2 * nh, o.resolved_output_size()));
  const double w0 = std::log(o.leak_init / (1.0 - o.leak_init));  // k = sigmoid(w), w0 = logit(k0) (our choice)
  leak_logit_ = register_parameter("leak_logit", torch::full({o.shared_leak ? 1 : 2, nh}, w0));
  if (o.forget_gate == SpikingForgetGate::kLru) {
    // LRU ring init (TFPORL's LRULayer): |λ| uniform on the ring r_min..r_max in area, phase uniform in [0, 2π).
    torch::NoGradGuard no_grad;
    const auto u1 = torch::rand({nh}, torch::kFloat64);
    const auto u2 = torch::rand({nh}, torch::kFloat64).clamp_min(1e-12);
    const double r2min = o.lru_r_min * o.lru_r_min, r2max = o.lru_r_max * o.lru_r_max;
    const auto nu_log = torch::log(-0.5 * torch::log(u1 * (r2max - r2min) + r2min));
    const auto phase_log = torch::log(2.0 * kPi * u2);
    lru_nu_log_ = register_parameter("lru_nu_log", nu_log.to(torch::kFloat32));
    lru_phase_log_ = register_parameter("lru_phase_log", phase_log.to(torch::kFloat32));
  }
  if (o.init == SpikingInit::kTruncatedNormal) {
    for (auto* p : {&in_proj_->weight, &in_proj_->bias, &out_proj_->weight, &out_proj_->bias})
      truncated_normal_(*p, 0.02);
  }
}

MemoryState Spiking::initial_state(int64_t batch, const torch::Device& device) const {
  const auto opts = torch::TensorOptions().device(device).dtype(torch::kFloat32);
  return {
      {torch::zeros({batch, options_.hidden_size, 2}, opts), torch::zeros({batch, 2 * options_.hidden_size}, opts)}};
}

std::pair<torch::Tensor, torch::Tensor> Spiking::forget_gate(const std::vector<torch::Tensor>& parts) const {
  if (options_.forget_gate == SpikingForgetGate::kInputDependent) {
    const auto& ch_re = parts[3];
    const auto& ch_im = parts[4];
    const auto sq = ch_re * ch_re + ch_im * ch_im;
    const auto r = torch::sqrt(sq + 1);
    const auto scale =
        options_.magnitude_in_tanh ? torch::tanh(r) / r : torch::tanh(torch::sqrt(sq.clamp_min(1e-30))) / r;
    return {ch_re * scale, ch_im * scale};
  }
  const auto modulus = torch::exp(-torch::exp(lru_nu_log_));
  const auto angle = torch::exp(lru_phase_log_);
  return {modulus * torch::cos(angle), modulus * torch::sin(angle)};
}

MemoryOutput Spiking::forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  return forward_traced(x, state, starts, nullptr);
}

MemoryOutput Spiking::forward_traced(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts,
                                     SpikingTrace* trace) {
  const auto& o = options_;
  const int64_t nh = o.hidden_size;
  TORCH_CHECK(x.dim() == 3 && x.size(2) == input_size_, "Spiking: x must be [T, B, ", input_size_, "], got ",
              x.sizes());
  const int64_t steps = x.size(0), batch = x.size(1);
  TORCH_CHECK(steps >= 1, "Spiking: empty sequence");
  TORCH_CHECK(starts.dim() == 2 && starts.size(0) == steps && starts.size(1) == batch,
              "Spiking: starts must be [T, B] matching x");
  TORCH_CHECK(state.tensors.size() == 2, "Spiking: state must hold (h, m)");
  const auto starts_b = starts.to(x.device(), torch::kBool);

  // One Linear for every input map: [W_x Re, W_x Im, W_i, W_o, (W_c Re, W_c Im)] (spiking paper Fig. 3, App. A).
  const auto proj = in_proj_->forward(x);  // [T, B, P]
  // One split, not a narrow per part: in backward a split concatenates the parts' gradients once, where each narrow
  // would fill a zero tensor of the whole projection's size.
  const auto parts = o.forget_gate == SpikingForgetGate::kLru ? proj.split_with_sizes({nh, nh, 2 * nh}, -1)
                                                              : proj.split_with_sizes({nh, nh, 2 * nh, nh, nh}, -1);
  const auto& wx_re = parts[0];
  const auto& wx_im = parts[1];
  const auto& current = parts[2];  // u = [W_i x, W_o x]

  // Membranes of both gates, one real scan (spiking paper Eq. 7): m_t = (1 − k) m_{t−1} + k u_t, reset to 0 at starts.
  auto k = torch::sigmoid(leak_logit_);
  if (o.shared_leak) k = k.expand({2, nh});
  k = k.reshape({2 * nh});
  const auto m0 = state.tensors[1].to(x.dtype()).reshape({batch, 2 * nh});
  const auto membrane = scan::linear_scan((1 - k).expand({steps, batch, 2 * nh}), k * current, m0, starts_b);

  // Gates (spiking paper Eq. 8): random threshold while training, fixed when acting.
  torch::Tensor gates, threshold;
  if (o.gate == SpikingGate::kSigmoid) {
    threshold = torch::scalar_tensor(o.resolved_acting_threshold(), membrane.options());
    gates = torch::sigmoid(membrane - threshold);
  } else {
    if (!is_training()) {
      threshold = torch::scalar_tensor(o.resolved_acting_threshold(), membrane.options());
    } else if (o.noise_high > o.noise_low) {
      const auto noise = o.noise_sampling == SpikingNoiseSampling::kPerStep
                             ? draw_uniform({steps, batch, 2 * nh}, membrane.options())
                             : draw_uniform({batch, 2 * nh}, membrane.options());
      threshold = noise * (o.noise_high - o.noise_low) + (o.theta + o.noise_low);
    } else {
      threshold = torch::scalar_tensor(o.theta + o.noise_low, membrane.options());
    }
    gates = spike(membrane - threshold, o.surrogate);
  }
  const auto gate_parts = gates.split(nh, -1);
  const auto& s_in = gate_parts[0];
  const auto& s_out = gate_parts[1];

  const auto [c_re, c_im] = forget_gate(parts);

  // Highways (spiking paper Eqs. 9, 20): h_t = a_t h_{t−1} + b_t with a = c s_in + (1 − s_in), b = (W_x x) s_in;
  // ŷ = s_out h + (1 − s_out) W_x x. One fused op where it runs (spiking_highway.hpp: the CPU, and CUDA in a build with
  // its kernels), elsewhere whole-tensor ops.
  const auto shape = s_in.sizes();
  const bool fused =
      scan::fused_ops_run_on(x.device()) && (x.scalar_type() == torch::kFloat32 || x.scalar_type() == torch::kFloat64);
  const auto highway = (fused ? spiking_highway : spiking_highway_reference)(
      wx_re, wx_im, c_re.expand(shape), c_im.expand(shape), s_in, s_out, state.tensors[0].to(x.dtype()), starts_b);

  // out = LN(W_y [Re ŷ, Im ŷ]) without affine parameters (spiking paper Eq. 11).
  auto y = out_proj_->forward(highway.y_hat);
  y = torch::layer_norm(y, {o.resolved_output_size()}, {}, {}, o.layer_norm_eps);

  if (trace != nullptr) *trace = {membrane, threshold, gates, torch::view_as_complex(highway.hidden)};
  MemoryState next{{highway.hidden.select(0, steps - 1), membrane.select(0, steps - 1)}};
  return {y, next};
}

}  // namespace rlm::memory
