// The one acting loop: a policy steps N envs with its own recurrent state until each env has played its quota of
// whole episodes. Off-policy collection (episodes into the replay buffer), periodic evaluation and `rlm eval` all run
// through run_episodes. (PPO's rollout keeps its own loop: it records values and logits per step and bootstraps
// truncated episodes.)
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "agents/action_distribution.hpp"
#include "envs/vec_env.hpp"

namespace rlm::agents {

/// A policy acting in N envs at once, one step at a time. Actions are in policy space: a Discrete index as a float,
/// a Box action in [−1, 1] (ActionSpec::to_env_actions maps them onto the env).
class ActingPolicy {
 public:
  virtual ~ActingPolicy() = default;
  /// Every env starts a fresh episode: recurrent state back to the initial one.
  virtual void begin(int64_t num_envs) = 0;
  /// obs [N, obs_size]; prev_actions [N, action_size] and prev_rewards [N] (0 where an episode starts); starts [N]
  /// bool. Returns actions [N, action_size] (CPU float).
  virtual torch::Tensor act(const torch::Tensor& obs, const torch::Tensor& prev_actions,
                            const torch::Tensor& prev_rewards, const torch::Tensor& starts, bool deterministic,
                            const torch::Generator& generator) = 0;
};

/// Uniformly random actions (off-policy warm-up): a uniform Discrete index, or U(−1, 1) per Box dimension.
class UniformRandomPolicy : public ActingPolicy {
 public:
  explicit UniformRandomPolicy(ActionSpec spec) : spec_(std::move(spec)) {}
  void begin(int64_t) override {}
  torch::Tensor act(const torch::Tensor& obs, const torch::Tensor&, const torch::Tensor&, const torch::Tensor&, bool,
                    const torch::Generator& generator) override;

 private:
  ActionSpec spec_;
};

/// One finished episode. obs holds L + 1 observations (the last is the one the episode ended on).
struct EpisodeRecord {
  int env = 0;
  std::vector<float> obs, actions, rewards;  ///< filled only when run_episodes records transitions
  bool terminated = false;                   ///< ended by termination (false: truncated by a time limit)
  double episode_return = 0.0;
  int64_t length = 0;
};

/// Resets every env and runs quota[i] whole episodes in env i (an env past its quota keeps stepping, ignored).
/// `on_episode` hears about each finished episode in the order they end (by env index within a step). Returns false
/// when `stop` turned true first.
bool run_episodes(envs::VecEnv& envs, ActingPolicy& policy, const ActionSpec& spec, const std::vector<int64_t>& quota,
                  bool deterministic, const torch::Generator& generator, bool record_transitions,
                  const std::function<void(EpisodeRecord&&)>& on_episode, const std::function<bool()>& stop = {});

/// n episodes spread over `num_envs` envs as evenly as possible (the first n % num_envs envs play one more).
std::vector<int64_t> episode_quota(int64_t episodes, int num_envs);

}  // namespace rlm::agents
