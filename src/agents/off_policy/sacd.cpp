// SAC-Discrete over one Discrete action (SAC-Discrete, arXiv:1910.07207, as pomdp-baselines runs it:
// twni2016/pomdp-baselines@28cb5dd:policies/rl/sacd.py): the critic outputs Q of every action, the target is the
// expectation Σ π(a'|h') (min(Q1', Q2')(a') − α log π(a'|h')), and the actor minimises Σ π (α log π − min Q)
// exactly, without sampling.
#include <fmt/format.h>

#include <cmath>

#include "agents/off_policy.hpp"
#include "agents/off_policy/algorithm.hpp"
#include "agents/off_policy_losses.hpp"
#include "core/error.hpp"

namespace rlm::agents {
namespace {

class Sacd : public OffPolicyAlgorithm {
 public:
  explicit Sacd(const SacdConfig& options) : options_(options) {}

  PolicyHead policy_head() const override { return PolicyHead::kCategorical; }
  void check_action_space(const ActionSpec& spec, const std::string& env_id) const override {
    if (spec.continuous || spec.nvec.size() != 1) {
      throw ConfigValueError(
          "algo.type",
          fmt::format("algo.type = sacd needs a Discrete action space, but {} has {}{}", env_id, describe_actions(spec),
                      spec.continuous ? " (use sac or td3)" : " (set env.discrete_action: true)"));
    }
  }
  const TemperatureConfig* temperature() const override { return &options_; }
  double target_entropy(int64_t num_actions) const override {
    return options_.target_entropy_ratio * std::log(static_cast<double>(num_actions));
  }
  torch::Tensor act(const torch::Tensor& actor_out, bool deterministic,
                    const torch::Generator& generator) const override {
    const auto index = deterministic
                           ? actor_out.argmax(-1, /*keepdim=*/true)
                           : torch::multinomial(torch::softmax(actor_out, -1), 1, /*replacement=*/true, generator);
    return index.to(torch::kFloat32);
  }
  torch::Tensor next_value(const UpdateInputs& u, const torch::Tensor& target_hidden) const override {
    const auto pi = categorical_policy(u.actor_out.index({u.next}).detach());
    const auto q = u.agent.critic_target->q(target_hidden, u.obs_next, {});
    return sacd_soft_value(pi, q.q1, q.q2, u.alpha);
  }
  std::pair<torch::Tensor, torch::Tensor> taken_q(const TwinQ& q, const torch::Tensor& actions) const override {
    const auto index = actions.to(torch::kInt64);  // [T, B, 1]
    return {q.q1.gather(-1, index).squeeze(-1), q.q2.gather(-1, index).squeeze(-1)};
  }
  ActorTerms actor_terms(const UpdateInputs& u, const torch::Tensor& critic_hidden) const override {
    const auto pi = categorical_policy(u.actor_out.index({u.now}));
    const auto qa = u.agent.critic->q(critic_hidden, u.obs_now, {});
    const auto neg_entropy = sacd_neg_entropy(pi).detach();
    return {sacd_actor_loss(pi, qa.q1, qa.q2, u.alpha, u.mask), masked_mean(neg_entropy, u.mask)};
  }

 private:
  SacdConfig options_;
};

}  // namespace

std::unique_ptr<OffPolicyAlgorithm> make_sacd(const Config& config) { return std::make_unique<Sacd>(config.algo.sacd); }

}  // namespace rlm::agents
