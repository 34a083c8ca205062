// The one acting loop: a policy steps N envs with its own recurrent state until each env has played the episodes its
// plan asks for. PPO's rollout (every env until it has steps_per_env steps and its episode has ended), off-policy
// collection (one episode per env into the replay buffer), periodic evaluation and `rlm eval` (a quota of episodes per
// env) all run through run_episodes; a trainer that records more per step (PPO: values, logits, bootstrap values)
// does so in its policy's act() and in the on_step hook.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <span>
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
  bool success = false;                      ///< reached its goal (envs that report success; else false)
  /// Per step, TaskSplitEnv::is_goal_state() after it: filled only when run_episodes records transitions of an env that
  /// reports_goal_state() (the meta-RL replay's per-step terminal flags).
  std::vector<uint8_t> goal_states;
  int task = -1;  ///< the episode's task (TaskSplitEnv::task()): −1 for envs without tasks
  double episode_return = 0.0;
  int64_t length = 0;
};

/// Returns and successes of finished episodes, summarised as the trainers and `rlm eval` report them.
struct EpisodeTally {
  std::vector<double> returns;  ///< in the order the episodes were added
  int64_t successes = 0;        ///< episodes that reached their goal (envs that report success)

  void add(const EpisodeRecord& episode) {
    returns.push_back(episode.episode_return);
    successes += episode.success ? 1 : 0;
  }
  int64_t episodes() const { return static_cast<int64_t>(returns.size()); }
  double mean_return() const;   ///< NaN when there are no episodes
  double std_return() const;    ///< population standard deviation; NaN when there are no episodes
  double success_rate() const;  ///< NaN when there are no episodes
};

/// Whether env `env` plays another episode that counts, given the steps and episodes it has played so far (asked at
/// the start with 0, 0 and whenever one of its episodes ends).
using EpisodePlan = std::function<bool(int env, int64_t steps, int64_t episodes)>;

/// One step of every env, for the on_step hook: t counts steps since the reset; `active` says which envs were playing
/// an episode that counts during it (before this step's episode ends are applied).
struct StepView {
  int64_t t = 0;
  std::span<const float> rewards, final_obs;
  std::span<const uint8_t> terminated, truncated;
  const std::vector<uint8_t>& active;
};

/// How run_episodes plays: training rollouts, warm-up, evaluation and `rlm eval` differ only in these.
struct EpisodeRunOptions {
  bool deterministic = false;       ///< act with the policy's mode (evaluation) instead of sampling
  bool record_transitions = false;  ///< fill each EpisodeRecord's obs, actions and rewards (for a replay buffer)
  std::function<bool()> stop = {};  ///< asked before every step: true ends the run early
  std::function<void(const StepView&)> on_step = {};  ///< sees every step right after the envs moved
};

/// Resets every env and steps them all until every env's plan says no more (an env done with its plan keeps stepping,
/// ignored), drawing from `generator`. `on_episode` hears about each finished episode that counts, in the order they
/// end (by env index within a step). Returns false when options.stop turned true first.
bool run_episodes(envs::VecEnv& envs, ActingPolicy& policy, const ActionSpec& spec, const EpisodePlan& plan,
                  const torch::Generator& generator, const std::function<void(EpisodeRecord&&)>& on_episode,
                  const EpisodeRunOptions& options = {});

/// The plan "quota[i] whole episodes in env i".
bool run_episodes(envs::VecEnv& envs, ActingPolicy& policy, const ActionSpec& spec, const std::vector<int64_t>& quota,
                  const torch::Generator& generator, const std::function<void(EpisodeRecord&&)>& on_episode,
                  const EpisodeRunOptions& options = {});

/// n episodes spread over `num_envs` envs as evenly as possible (the first n % num_envs envs play one more).
std::vector<int64_t> episode_quota(int64_t episodes, int num_envs);

}  // namespace rlm::agents
