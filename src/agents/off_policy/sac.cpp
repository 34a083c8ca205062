// SAC with a tanh-squashed Gaussian policy over Box actions (SAC, arXiv:1812.05905, as pomdp-baselines runs it:
// twni2016/pomdp-baselines@28cb5dd:policies/rl/sac.py): the target is the soft value
// min(Q1', Q2')(a') − α log π(a'|h') with a' drawn from the current actor, the actor minimises
// α log π(a|h) − min(Q1, Q2)(a) with a reparameterised draw.
#include "agents/off_policy.hpp"
#include "agents/off_policy/algorithm.hpp"
#include "agents/off_policy_losses.hpp"

namespace rlm::agents {
namespace {

class Sac : public OffPolicyAlgorithm {
 public:
  explicit Sac(const SacConfig& options) : options_(options) {}

  PolicyHead policy_head() const override { return PolicyHead::kTanhGaussian; }
  void check_action_space(const ActionSpec& spec, const std::string& env_id) const override {
    require_box_actions("sac", spec, env_id);
  }
  const TemperatureConfig* temperature() const override { return &options_; }
  double target_entropy(int64_t num_actions) const override {
    return options_.target_entropy_per_dim * static_cast<double>(num_actions);
  }
  torch::Tensor act(const torch::Tensor& actor_out, bool deterministic,
                    const torch::Generator& generator) const override {
    const auto parts = actor_out.chunk(2, -1);  // mean, log σ
    if (deterministic) return torch::tanh(parts[0]);
    return torch::tanh(parts[0] + parts[1].exp() * torch::randn(parts[0].sizes(), generator, torch::kFloat32));
  }
  torch::Tensor next_value(const UpdateInputs& u, const torch::Tensor& target_hidden) const override {
    const auto out = u.actor_out.index({u.next});
    const auto sample = squashed_gaussian_sample(out.detach(), u.randn(out.chunk(2, -1)[0]));
    const auto q = u.agent.critic_target->q(target_hidden, u.obs_next, sample.action);
    return torch::min(q.q1, q.q2).squeeze(-1) - u.alpha * sample.log_prob;
  }
  std::pair<torch::Tensor, torch::Tensor> taken_q(const TwinQ& q, const torch::Tensor&) const override {
    return {q.q1.squeeze(-1), q.q2.squeeze(-1)};
  }
  ActorTerms actor_terms(const UpdateInputs& u, const torch::Tensor& critic_hidden) const override {
    const auto out = u.actor_out.index({u.now});
    const auto sample = squashed_gaussian_sample(out, u.randn(out.chunk(2, -1)[0]));
    const auto qa = u.agent.critic->q(critic_hidden, u.obs_now, sample.action);
    return {sac_actor_loss(sample.log_prob, qa.q1, qa.q2, u.alpha, u.mask),
            masked_mean(sample.log_prob.detach(), u.mask)};
  }

 private:
  SacConfig options_;
};

}  // namespace

std::unique_ptr<OffPolicyAlgorithm> make_sac(const Config& config) { return std::make_unique<Sac>(config.algo.sac); }

}  // namespace rlm::agents
