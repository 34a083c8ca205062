// TD3 with a deterministic tanh policy over Box actions (TD3, arXiv:1802.09477, as pomdp-baselines runs it:
// twni2016/pomdp-baselines@28cb5dd:policies/rl/td3.py): the target reads the target actor's action plus clipped
// Gaussian smoothing noise, the actor maximises Q1 ∧ Q2 of its own action, exploration adds Gaussian noise. No
// temperature: log α stays 0 and is never stepped.
#include "agents/off_policy.hpp"
#include "agents/off_policy/algorithm.hpp"
#include "agents/off_policy_losses.hpp"

namespace rlm::agents {
namespace {

class Td3 : public OffPolicyAlgorithm {
 public:
  explicit Td3(const Td3Config& options) : options_(options) {}

  PolicyHead policy_head() const override { return PolicyHead::kDeterministic; }
  void check_action_space(const ActionSpec& spec, const std::string& env_id) const override {
    require_box_actions("td3", spec, env_id);
  }
  const TemperatureConfig* temperature() const override { return nullptr; }
  double target_entropy(int64_t) const override { return 0.0; }
  torch::Tensor act(const torch::Tensor& actor_out, bool deterministic,
                    const torch::Generator& generator) const override {
    if (deterministic) return actor_out;
    return (actor_out + options_.exploration_noise * torch::randn(actor_out.sizes(), generator, torch::kFloat32))
        .clamp(-1.0, 1.0);
  }
  torch::Tensor next_value(const UpdateInputs& u, const torch::Tensor& target_hidden) const override {
    auto& actor_target = u.agent.actor_target;
    const auto batch = u.in.obs.size(1);
    const auto mu =
        actor_target->forward(u.in, actor_target->initial_state(batch, u.in.obs.device()), nullptr).index({u.next});
    const auto smoothed = td3_smoothed_action(mu, u.randn(mu), options_.target_noise, options_.target_noise_clip);
    const auto q = u.agent.critic_target->q(target_hidden, u.obs_next, smoothed);
    return torch::min(q.q1, q.q2).squeeze(-1);
  }
  std::pair<torch::Tensor, torch::Tensor> taken_q(const TwinQ& q, const torch::Tensor&) const override {
    return {q.q1.squeeze(-1), q.q2.squeeze(-1)};
  }
  ActorTerms actor_terms(const UpdateInputs& u, const torch::Tensor& critic_hidden) const override {
    const auto qa = u.agent.critic->q(critic_hidden, u.obs_now, u.actor_out.index({u.now}));
    return {-masked_mean(torch::min(qa.q1, qa.q2).squeeze(-1), u.mask), {}};
  }

 private:
  Td3Config options_;
};

}  // namespace

std::unique_ptr<OffPolicyAlgorithm> make_td3(const Config& config) { return std::make_unique<Td3>(config.algo.td3); }

}  // namespace rlm::agents
