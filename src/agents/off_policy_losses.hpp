// The loss terms of recurrent SAC, SAC-Discrete and TD3 as twni2016/pomdp-baselines@28cb5dd:policies/rl/ computes
// them, as pure functions of network outputs so that each can be checked against hand-computed values.
// Every tensor is [T, B, ...] over the T positions of a sampled window; `mask` [T, B] is 1 on real steps and 0 on
// padding and burn-in, and every mean divides by num_valid = max(1, Σ mask), so padding never enters a loss.
#pragma once
#include <torch/torch.h>

namespace rlm::agents {

/// Σ(x · mask) / max(1, Σ mask), x [T, B].
torch::Tensor masked_mean(const torch::Tensor& x, const torch::Tensor& mask);

/// Σ((q·m − y·m)²) / num_valid for one critic: q and y [T, B].
torch::Tensor critic_loss(const torch::Tensor& q, const torch::Tensor& target, const torch::Tensor& mask);

/// One-step target y = r + (1 − d) γ v_next, with v_next [T, B] the value of the next position.
torch::Tensor td_target(const torch::Tensor& rewards, const torch::Tensor& terminated, double gamma,
                        const torch::Tensor& next_value);

// ---- SAC-Discrete (Christodoulou 2019) ----

/// A categorical policy's probabilities and log-probabilities from logits: log π = log(clamp(π, 1e-8)), as
/// pomdp-baselines' CategoricalPolicy computes them (not log_softmax).
struct CategoricalPolicy {
  torch::Tensor probs, log_probs;  ///< [T, B, |A|]
};
CategoricalPolicy categorical_policy(const torch::Tensor& logits);

/// V(h) = Σ_a π(a)[min(Q1, Q2)(a) − α log π(a)]: [T, B].
torch::Tensor sacd_soft_value(const CategoricalPolicy& pi, const torch::Tensor& q1, const torch::Tensor& q2,
                              double alpha);
/// Actor loss Σ_a π(a)[α log π(a) − min(Q1, Q2)(a)], masked mean.
torch::Tensor sacd_actor_loss(const CategoricalPolicy& pi, const torch::Tensor& q1, const torch::Tensor& q2,
                              double alpha, const torch::Tensor& mask);
/// Σ_a π log π at every position (negative entropy), [T, B].
torch::Tensor sacd_neg_entropy(const CategoricalPolicy& pi);

// ---- SAC with a tanh-squashed Gaussian ----

struct SquashedSample {
  torch::Tensor action;    ///< tanh(z), [T, B, dims]
  torch::Tensor log_prob;  ///< Σ_dims [log N(z; μ, σ) − log(1 − tanh(z)² + 1e-6)], [T, B]
};
/// Reparameterised sample z = μ + σ ε with ε given (so tests and resumes control the noise). mean_log_std is the
/// actor's output [T, B, 2·dims]: mean, then log σ (already clamped).
SquashedSample squashed_gaussian_sample(const torch::Tensor& mean_log_std, const torch::Tensor& noise);
/// Actor loss α log π(ã) − min(Q1, Q2)(ã), masked mean; q1, q2 [T, B, 1].
torch::Tensor sac_actor_loss(const torch::Tensor& log_prob, const torch::Tensor& q1, const torch::Tensor& q2,
                             double alpha, const torch::Tensor& mask);

/// Temperature loss −exp(log α) · (mean_log_prob + target_entropy), mean_log_prob the masked mean of the detached
/// log π (SAC) or Σ_a π log π (SAC-D).
torch::Tensor alpha_loss(const torch::Tensor& log_alpha, const torch::Tensor& mean_log_prob, double target_entropy);

// ---- TD3 ----

/// Target policy smoothing: clip(μ'(h') + clip(σ ε, ±c), −1, 1).
torch::Tensor td3_smoothed_action(const torch::Tensor& target_action, const torch::Tensor& noise, double sigma,
                                  double clip);

}  // namespace rlm::agents
