#include "agents/off_policy_losses.hpp"

#include <cmath>

namespace rlm::agents {
namespace {
constexpr double kLogSqrt2Pi = 0.91893853320467274178;  // log √(2π)
}

torch::Tensor masked_mean(const torch::Tensor& x, const torch::Tensor& mask) {
  return (x * mask).sum() / mask.sum().clamp_min(1.0);
}

torch::Tensor critic_loss(const torch::Tensor& q, const torch::Tensor& target, const torch::Tensor& mask) {
  return (q * mask - target * mask).pow(2).sum() / mask.sum().clamp_min(1.0);
}

torch::Tensor td_target(const torch::Tensor& rewards, const torch::Tensor& terminated, double gamma,
                        const torch::Tensor& next_value) {
  return rewards + (1.0 - terminated) * gamma * next_value;
}

CategoricalPolicy categorical_policy(const torch::Tensor& logits) {
  auto probs = torch::softmax(logits, -1);
  auto log_probs = torch::log(probs.clamp_min(1e-8));
  return {std::move(probs), std::move(log_probs)};
}

torch::Tensor sacd_soft_value(const CategoricalPolicy& pi, const torch::Tensor& q1, const torch::Tensor& q2,
                              double alpha) {
  return (pi.probs * (torch::min(q1, q2) - alpha * pi.log_probs)).sum(-1);
}

torch::Tensor sacd_actor_loss(const CategoricalPolicy& pi, const torch::Tensor& q1, const torch::Tensor& q2,
                              double alpha, const torch::Tensor& mask) {
  return masked_mean((pi.probs * (alpha * pi.log_probs - torch::min(q1, q2))).sum(-1), mask);
}

torch::Tensor sacd_neg_entropy(const CategoricalPolicy& pi) { return (pi.probs * pi.log_probs).sum(-1); }

SquashedSample squashed_gaussian_sample(const torch::Tensor& mean_log_std, const torch::Tensor& noise) {
  const auto parts = mean_log_std.chunk(2, -1);
  const auto& mean = parts[0];
  const auto& log_std = parts[1];
  const auto z = mean + log_std.exp() * noise;
  auto action = torch::tanh(z);
  // log N(z; μ, σ) = −ε²/2 − log σ − log √(2π), with ε = (z − μ)/σ = noise.
  const auto gaussian = -0.5 * noise.pow(2) - log_std - kLogSqrt2Pi;
  auto log_prob = (gaussian - torch::log(1.0 - action.pow(2) + 1e-6)).sum(-1);
  return {std::move(action), std::move(log_prob)};
}

torch::Tensor sac_actor_loss(const torch::Tensor& log_prob, const torch::Tensor& q1, const torch::Tensor& q2,
                             double alpha, const torch::Tensor& mask) {
  return masked_mean(alpha * log_prob - torch::min(q1, q2).squeeze(-1), mask);
}

torch::Tensor alpha_loss(const torch::Tensor& log_alpha, const torch::Tensor& mean_log_prob, double target_entropy) {
  return -log_alpha.exp() * (mean_log_prob + target_entropy);
}

torch::Tensor td3_smoothed_action(const torch::Tensor& target_action, const torch::Tensor& noise, double sigma,
                                  double clip) {
  return (target_action + (noise * sigma).clamp(-clip, clip)).clamp(-1.0, 1.0);
}

}  // namespace rlm::agents
