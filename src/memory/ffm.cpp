#include "memory/ffm.hpp"

#include <cfloat>
#include <cmath>

#include "nn/linear.hpp"
#include "scan/linear_scan.hpp"

namespace rlm::memory {
namespace {

constexpr double kTwoPi = 6.283185307179586;
// The code's clamp of a (proroklab/ffm@b3f94d2:aggregations.py) keeps every decay strictly below 1 in magnitude.
constexpr double kMaxA = -1e-8;

// a (= −α) and b (= ω) as vectors [m] and [c] (FFM paper App. B, Fig. 6). Float32, like the reference's Parameters.
std::pair<torch::Tensor, torch::Tensor> initial_decay(const FfmOptions& o, double limit) {
  const double log_beta = std::log(o.forgotten_at);
  const double t_e = o.max_period;
  torch::Tensor a, b;
  switch (o.init) {
    case FfmInit::kCode: {
      const double a_low = -limit + o.fudge;
      const double a_high = std::max(std::min(-1e-6, log_beta / t_e), a_low);
      a = torch::linspace(a_low, a_high, o.memory_size);
      b = kTwoPi / torch::linspace(o.min_period, o.max_period, o.context_size);
      break;
    }
    case FfmInit::kPaper: {
      // Eq. 31 with magnitudes (the paper mixes signs; α ∈ R+ and γ = exp(−α)), j = 1..m; eq. 33 with min_period in
      // place of its literal 1, j = 1..c. For c = 4, t_e = 1024 the periods are 768.25, 512.5, 256.75, 1.
      const double slow = -log_beta / t_e, fast = std::log(DBL_MAX) / t_e - o.fudge;
      auto j = torch::arange(1, o.memory_size + 1, torch::kFloat64) / static_cast<double>(o.memory_size);
      a = (-(j * slow + (1.0 - j) * fast)).to(torch::kFloat32);
      auto k = torch::arange(1, o.context_size + 1, torch::kFloat64) / static_cast<double>(o.context_size);
      b = (kTwoPi / (k * o.min_period + (1.0 - k) * t_e)).to(torch::kFloat32);
      break;
    }
    case FfmInit::kPeriods: {
      // Fig. 6's informed init (our mapping; the paper gives none): 1% horizons linearly between min_period and
      // max_period (the fast end bounded like the code's a_low, so the defaults reproduce kCode).
      const double a_low = std::max(log_beta / o.min_period, -limit + o.fudge);
      const double a_high = std::max(std::min(-1e-6, log_beta / t_e), a_low);
      a = torch::linspace(a_low, a_high, o.memory_size);
      b = kTwoPi / torch::linspace(o.min_period, o.max_period, o.context_size);
      break;
    }
  }
  if (!o.oscillate) b.fill_(1e-6);
  if (!o.decay) a.fill_(0.0);
  return {a, b};
}

}  // namespace

Ffm::Ffm(int64_t input_size, const FfmOptions& options) : options_(options) {
  const FfmOptions& o = options_;
  TORCH_CHECK(input_size >= 1 && o.memory_size >= 1 && o.context_size >= 1 && o.output_size >= 1,
              "Ffm: sizes must be positive");
  TORCH_CHECK(o.min_period > 0 && o.max_period >= o.min_period, "Ffm: need 0 < min_period <= max_period");
  TORCH_CHECK(o.forgotten_at > 0 && o.forgotten_at < 1, "Ffm: forgotten_at must lie in (0, 1)");
  TORCH_CHECK(o.max_len >= 1, "Ffm: max_len must be positive");
  limit_ = std::log(DBL_MAX) / static_cast<double>(o.max_len) - o.fudge;
  TORCH_CHECK(limit_ > -kMaxA, "Ffm: max_len/fudge leave no room for a decay");

  const int64_t m = o.memory_size, c = o.context_size, d = o.output_size;
  // Construction order as the reference (pre, aggregator, mix), so one seed draws the same Linear weights.
  pre = register_module("pre", rlm::nn::Linear(input_size, 2 * m + 2 * d));
  auto [a0, b0] = initial_decay(o, limit_);
  if (o.decay_shape == FfmDecayShape::kHadamard) {
    a0 = a0.unsqueeze(1).expand({m, c}).clone();
    b0 = b0.unsqueeze(0).expand({m, c}).clone();
  }
  a = register_parameter("a", a0);
  b = register_parameter("b", b0);
  mix = register_module("mix", rlm::nn::Linear(2 * m * c, d));
}

MemoryState Ffm::initial_state(int64_t batch, const torch::Device& device) const {
  return {{torch::zeros({batch, options_.memory_size, options_.context_size},
                        torch::TensorOptions().dtype(torch::kComplexFloat).device(device))}};
}

torch::Tensor Ffm::decay_gate() {
  const FfmOptions& o = options_;
  torch::Tensor ac = a.clamp(-limit_, kMaxA);
  torch::Tensor bc = b;
  if (!o.decay || !o.learn_decay) ac = ac.detach();
  if (!o.oscillate || !o.learn_oscillate) bc = bc.detach();
  if (o.conjugate_frequency) bc = -bc;
  if (o.decay_shape == FfmDecayShape::kOuter) {
    ac = ac.unsqueeze(1).expand({o.memory_size, o.context_size});
    bc = bc.unsqueeze(0).expand({o.memory_size, o.context_size});
  }
  // log γ in float64 (FFM paper, Limitations: double precision for γ), then γ in the scan's dtype.
  auto gamma = torch::exp(torch::complex(ac.to(torch::kFloat64), bc.to(torch::kFloat64)));
  return gamma.to(o.double_precision ? torch::kComplexDouble : torch::kComplexFloat);
}

MemoryOutput Ffm::forward(const torch::Tensor& x, const MemoryState& state, const torch::Tensor& starts) {
  const FfmOptions& o = options_;
  const int64_t m = o.memory_size, c = o.context_size, d = o.output_size, mc = m * c;
  TORCH_CHECK(x.dim() == 3 && x.size(2) == pre->options.in_features(), "Ffm: x must be [T, B, ",
              pre->options.in_features(), "], got ", x.sizes());
  const int64_t steps = x.size(0), batch = x.size(1);
  TORCH_CHECK(
      starts.dim() == 2 && starts.size(0) == steps && starts.size(1) == batch && starts.scalar_type() == torch::kBool,
      "Ffm: starts must be bool [T, B] matching x");
  const torch::Tensor& s_prev = state.tensors.at(0);
  TORCH_CHECK(s_prev.dim() == 3 && s_prev.size(0) == batch && s_prev.size(1) == m && s_prev.size(2) == c,
              "Ffm: state must be [B, m, c] = [", batch, ", ", m, ", ", c, "], got ", s_prev.sizes());
  if (steps == 0) return {torch::empty({0, batch, d}, x.options()), state};

  if (o.clamp_writeback) {
    // The standalone cell's `a.data = clamp(a.data)`: fresh data, so graphs built earlier keep the old values.
    torch::NoGradGuard no_grad;
    a.set_data(a.clamp(-limit_, kMaxA));
  }

  // Input and output gates (FFM paper Eq. 15, 18; the code's [v | thru | gate] split).
  const auto parts = pre(x).split_with_sizes({m, d, m + d}, -1);
  torch::Tensor v = parts[0];
  const torch::Tensor& thru = parts[1];
  const torch::Tensor gate = torch::sigmoid(parts[2]);
  if (o.input_gate) v = v * gate.narrow(-1, 0, m);

  // Aggregator (FFM paper Eq. 11): S_t = γ ⊙ S_{t-1} + x̃_t 1_cᵀ, S_{-1} = the carried state, zeroed at episode starts.
  const auto complex_type = o.double_precision ? torch::kComplexDouble : torch::kComplexFloat;
  const torch::Tensor gates = decay_gate().reshape({1, 1, mc}).expand({steps, batch, mc});  // read in place
  const torch::Tensor inputs =
      v.to(complex_type).unsqueeze(-1).expand({steps, batch, m, c}).reshape({steps, batch, mc});
  const torch::Tensor h0 = s_prev.to(complex_type).reshape({batch, mc});
  const torch::Tensor s = scan::linear_scan(gates, inputs, h0, starts);  // [T, B, mc]

  // Real features (FFM paper Eq. 17), mix, non-affine LayerNorm and the gated residual (Eq. 18).
  torch::Tensor features;
  if (o.flatten == FfmFlatten::kInterleaved) {
    features = torch::view_as_real(s).reshape({steps, batch, 2 * mc});
  } else {
    const auto grid = s.view({steps, batch, m, c});
    features = torch::cat({torch::real(grid), torch::imag(grid)}, -1).reshape({steps, batch, 2 * mc});
  }
  features = features.to(x.scalar_type());  // the code casts S to complex64 before mix
  const torch::Tensor z = torch::layer_norm(mix(features), {d}, {}, {}, 1e-5);
  torch::Tensor y;
  if (o.output_gate) {
    const torch::Tensor out_gate = gate.narrow(-1, m, d);
    y = z * out_gate + thru * (1 - out_gate);
  } else {
    y = z + thru;
  }
  return {y, {{s[steps - 1].view({batch, m, c}).to(torch::kComplexFloat)}}};  // stored as complex64, as the code does
}

}  // namespace rlm::memory
