// What sets SAC, SAC-Discrete and TD3 apart inside the one recurrent off-policy trainer (agents/off_policy.hpp):
// the policy head, the action spaces it takes, the temperature, how it acts, and the three loss terms of an update
// (the critic's target value, Q of the taken action, the actor's loss). The trainer runs everything else the same
// way for all three: replay, windows, the critic and actor steps, the target networks, α. Each algorithm is one
// file beside this one and one row of trainer_rows() (agents/trainer.cpp).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "agents/action_distribution.hpp"
#include "agents/experiment_config.hpp"
#include "agents/recurrent_networks.hpp"

namespace rlm::agents {

class OffPolicyAgentImpl;

/// What the loss terms of one update read. Positions 0..T−1 (`now`) are predicted, positions 1..T (`next`) feed
/// the targets (the time alignment at the top of off_policy.cpp).
struct UpdateInputs {
  OffPolicyAgentImpl& agent;
  const SequenceInputs& in;
  const torch::Tensor& actor_out;  ///< the actor over the whole window, [T + 1, B, ...]
  torch::indexing::Slice now, next;
  const torch::Tensor& obs_now;
  const torch::Tensor& obs_next;
  const torch::Tensor& mask;  ///< [T, B]: 1 at real steps, 0 at padding
  double alpha;
  /// Standard normal noise shaped like its argument, from the update's generator, on the update's device.
  const std::function<torch::Tensor(const torch::Tensor&)>& randn;
};

/// The actor's loss and, for an algorithm with a temperature, the mean log π behind the entropy and the α step.
struct ActorTerms {
  torch::Tensor loss;
  torch::Tensor mean_log_prob;  ///< undefined: no entropy, no α step (TD3)
};

class OffPolicyAlgorithm {
 public:
  virtual ~OffPolicyAlgorithm() = default;
  /// The actor's head; kDeterministic also gives the agent a target actor.
  virtual PolicyHead policy_head() const = 0;
  /// Throws ConfigValueError on algo.type when `spec` is not an action space the algorithm acts in.
  virtual void check_action_space(const ActionSpec& spec, const std::string& env_id) const = 0;
  /// The temperature settings (algo.sac or algo.sacd); nullptr for an algorithm without α (its log α stays 0).
  virtual const TemperatureConfig* temperature() const = 0;
  /// The entropy α is tuned towards, for `num_actions` actions (|A|) or action dimensions.
  virtual double target_entropy(int64_t num_actions) const = 0;
  /// The action from the actor's output at one step ([B, ...]): the mode when `deterministic`, else a draw.
  virtual torch::Tensor act(const torch::Tensor& actor_out, bool deterministic,
                            const torch::Generator& generator) const = 0;
  /// The value of the next positions, [T, B], from the target critic's memory output there (no gradient).
  virtual torch::Tensor next_value(const UpdateInputs& u, const torch::Tensor& target_hidden) const = 0;
  /// Q1 and Q2 of the taken actions ([T, B, 1] stored actions), each [T, B].
  virtual std::pair<torch::Tensor, torch::Tensor> taken_q(const TwinQ& q, const torch::Tensor& actions) const = 0;
  /// The actor's loss through the critic (its memory output at `now`, its parameters frozen).
  virtual ActorTerms actor_terms(const UpdateInputs& u, const torch::Tensor& critic_hidden) const = 0;
};

std::unique_ptr<OffPolicyAlgorithm> make_sac(const Config& config);
std::unique_ptr<OffPolicyAlgorithm> make_sacd(const Config& config);
std::unique_ptr<OffPolicyAlgorithm> make_td3(const Config& config);

/// The action space, as error messages name it ("Discrete(4)", "Box with 2 dimensions").
std::string describe_actions(const ActionSpec& spec);
/// For sac and td3: a ConfigValueError on algo.type unless `spec` is a Box.
void require_box_actions(const std::string& type, const ActionSpec& spec, const std::string& env_id);

}  // namespace rlm::agents
