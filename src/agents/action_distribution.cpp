#include "agents/action_distribution.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numbers>

#include "core/error.hpp"

namespace rlm::agents {

ActionSpec ActionSpec::from_space(const envs::Space& space, const std::string& env_id) {
  using Kind = envs::Space::Kind;
  ActionSpec spec;
  if (space.kind == Kind::Discrete || space.kind == Kind::MultiDiscrete) {
    spec.nvec = space.nvec;
    return spec;
  }
  if (space.kind == Kind::Box) {
    for (size_t i = 0; i < space.low.size(); ++i) {
      if (!std::isfinite(space.low[i]) || !std::isfinite(space.high[i]))
        throw ConfigError(
            fmt::format("env.id = '{}': continuous actions need finite bounds, got {}", env_id, space.to_string()));
    }
    spec.continuous = true;
    spec.low = space.low;
    spec.high = space.high;
    return spec;
  }
  throw ConfigError(fmt::format("env.id = '{}': unsupported action space {}", env_id, space.to_string()));
}

int64_t ActionSpec::action_size() const {
  return continuous ? static_cast<int64_t>(low.size()) : static_cast<int64_t>(nvec.size());
}

int64_t ActionSpec::num_logits() const { return continuous ? 2 * action_size() : agents::num_logits(nvec); }

void ActionSpec::to_env_actions(const torch::Tensor& actions, std::span<float> out) const {
  const auto a = actions.contiguous();
  const float* p = a.data_ptr<float>();
  const size_t k = static_cast<size_t>(action_size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (!continuous) {
      out[i] = p[i];
      continue;
    }
    const size_t d = i % k;
    const float x = std::clamp(p[i], -1.0f, 1.0f);
    out[i] = std::clamp(low[d] + (x + 1.0f) * 0.5f * (high[d] - low[d]), low[d], high[d]);
  }
}

DiagGaussian::DiagGaussian(const torch::Tensor& logits) {
  auto parts = logits.chunk(2, -1);
  mean_ = parts[0];
  log_std_ = parts[1];
}

torch::Tensor DiagGaussian::sample(const torch::Generator& generator) const {
  auto noise = at::normal(0.0, 1.0, mean_.sizes(), generator, mean_.options());
  return mean_ + log_std_.exp() * noise;
}

torch::Tensor DiagGaussian::log_prob(const torch::Tensor& actions) const {
  const double half_log_two_pi = 0.5 * std::log(2.0 * std::numbers::pi);
  auto z = (actions - mean_) / log_std_.exp();
  return (-0.5 * z.pow(2) - log_std_ - half_log_two_pi).sum(-1);
}

torch::Tensor DiagGaussian::entropy() const {
  const double half_log_two_pi_e = 0.5 + 0.5 * std::log(2.0 * std::numbers::pi);
  return (log_std_ + half_log_two_pi_e).sum(-1);
}

torch::Tensor DiagGaussian::kl(const DiagGaussian& other) const {
  auto var = (2.0 * log_std_).exp();
  auto other_var = (2.0 * other.log_std_).exp();
  return (other.log_std_ - log_std_ + (var + (mean_ - other.mean_).pow(2)) / (2.0 * other_var) - 0.5).sum(-1);
}

ActionDistribution::ActionDistribution(const ActionSpec& spec, const torch::Tensor& logits) {
  if (spec.continuous) {
    gaussian_.emplace(logits);
  } else {
    categorical_.emplace(logits, spec.nvec);
  }
}

torch::Tensor ActionDistribution::sample(const torch::Generator& generator) const {
  return gaussian_ ? gaussian_->sample(generator) : categorical_->sample(generator).to(torch::kFloat32);
}

torch::Tensor ActionDistribution::mode() const {
  return gaussian_ ? gaussian_->mode() : categorical_->mode().to(torch::kFloat32);
}

torch::Tensor ActionDistribution::log_prob(const torch::Tensor& actions) const {
  return gaussian_ ? gaussian_->log_prob(actions) : categorical_->log_prob(actions.to(torch::kInt64));
}

torch::Tensor ActionDistribution::entropy() const { return gaussian_ ? gaussian_->entropy() : categorical_->entropy(); }

torch::Tensor ActionDistribution::kl(const ActionDistribution& other) const {
  return gaussian_ ? gaussian_->kl(*other.gaussian_) : categorical_->kl(*other.categorical_);
}

}  // namespace rlm::agents
