#include "agents/acting.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace rlm::agents {

torch::Tensor UniformRandomPolicy::act(const torch::Tensor& obs, const torch::Tensor&, const torch::Tensor&,
                                       const torch::Tensor&, bool, const torch::Generator& generator) {
  const int64_t n = obs.size(0);
  if (spec_.continuous) {
    return torch::rand({n, spec_.action_size()}, generator, torch::kFloat32) * 2.0 - 1.0;
  }
  auto actions = torch::empty({n, spec_.action_size()}, torch::kFloat32);
  for (int64_t c = 0; c < spec_.action_size(); ++c) {
    actions.select(1, c).copy_(torch::randint(spec_.nvec[static_cast<size_t>(c)], {n}, generator, torch::kInt64));
  }
  return actions;
}

std::vector<int64_t> episode_quota(int64_t episodes, int num_envs) {
  std::vector<int64_t> quota(static_cast<size_t>(num_envs), episodes / num_envs);
  for (int64_t i = 0; i < episodes % num_envs; ++i) ++quota[static_cast<size_t>(i)];
  return quota;
}

bool run_episodes(envs::VecEnv& envs, ActingPolicy& policy, const ActionSpec& spec, const std::vector<int64_t>& quota,
                  const torch::Generator& generator, const std::function<void(EpisodeRecord&&)>& on_episode,
                  const EpisodeRunOptions& options) {
  const auto plan = [&quota](int env, int64_t, int64_t episodes) {
    return static_cast<size_t>(env) < quota.size() && episodes < quota[static_cast<size_t>(env)];
  };
  return run_episodes(envs, policy, spec, plan, generator, on_episode, options);
}

bool run_episodes(envs::VecEnv& envs, ActingPolicy& policy, const ActionSpec& spec, const EpisodePlan& plan,
                  const torch::Generator& generator, const std::function<void(EpisodeRecord&&)>& on_episode,
                  const EpisodeRunOptions& options) {
  const bool record_transitions = options.record_transitions;
  torch::NoGradGuard no_grad;
  const int n = envs.num_envs();
  const int64_t obs_size = envs.obs_size();
  const int64_t action_size = spec.action_size();
  const bool record_goal_states = record_transitions && envs.reports_goal_state();
  std::vector<uint8_t> active(static_cast<size_t>(n));
  std::vector<int64_t> steps(static_cast<size_t>(n), 0), episodes(static_cast<size_t>(n), 0);
  int num_active = 0;
  for (int i = 0; i < n; ++i) num_active += active[static_cast<size_t>(i)] = plan(i, 0, 0) ? 1 : 0;

  envs.reset();
  policy.begin(n);
  std::vector<EpisodeRecord> running(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) running[static_cast<size_t>(i)].env = i;
  auto starts = torch::ones({n}, torch::kBool);
  auto prev_actions = torch::zeros({n, action_size}, torch::kFloat32);
  auto prev_rewards = torch::zeros({n}, torch::kFloat32);
  std::vector<float> env_actions(static_cast<size_t>(n * action_size));
  for (int64_t t = 0; num_active > 0; ++t) {
    if (options.stop && options.stop()) return false;
    const auto obs = torch::from_blob(const_cast<float*>(envs.obs().data()), {n, obs_size}, torch::kFloat32);
    if (record_transitions) {
      for (int i = 0; i < n; ++i) {
        if (!active[static_cast<size_t>(i)]) continue;
        const float* o = envs.obs().data() + i * obs_size;
        running[static_cast<size_t>(i)].obs.insert(running[static_cast<size_t>(i)].obs.end(), o, o + obs_size);
      }
    }
    const auto actions =
        policy.act(obs, prev_actions, prev_rewards, starts, options.deterministic, generator).contiguous();
    spec.to_env_actions(actions, env_actions);
    envs.step(env_actions);
    if (options.on_step)
      options.on_step({t, envs.rewards(), envs.final_obs(), envs.terminated(), envs.truncated(), active});

    auto* start_flags = starts.data_ptr<bool>();
    const float* action_data = actions.data_ptr<float>();
    float* prev_action_data = prev_actions.data_ptr<float>();
    float* prev_reward_data = prev_rewards.data_ptr<float>();
    for (int i = 0; i < n; ++i) {
      const bool done = envs.terminated()[i] || envs.truncated()[i];
      start_flags[i] = done;
      // The next step's previous action and reward: this step's, or 0 where a new episode starts.
      for (int64_t c = 0; c < action_size; ++c)
        prev_action_data[i * action_size + c] = done ? 0.0f : action_data[i * action_size + c];
      prev_reward_data[i] = done ? 0.0f : envs.rewards()[i];
      if (!active[static_cast<size_t>(i)]) continue;
      auto& episode = running[static_cast<size_t>(i)];
      episode.episode_return += envs.rewards()[i];
      ++episode.length;
      ++steps[static_cast<size_t>(i)];
      if (record_transitions) {
        episode.actions.insert(episode.actions.end(), action_data + i * action_size,
                               action_data + (i + 1) * action_size);
        episode.rewards.push_back(envs.rewards()[i]);
        if (record_goal_states) episode.goal_states.push_back(envs.goal_states()[i]);
      }
      if (!done) continue;
      episode.terminated = envs.terminated()[i] != 0;
      episode.success = envs.successes()[i] != 0;
      episode.task = envs.tasks()[i];
      if (record_transitions) {
        const float* last = envs.final_obs().data() + i * obs_size;
        episode.obs.insert(episode.obs.end(), last, last + obs_size);
      }
      on_episode(std::move(episode));
      episode = EpisodeRecord{};
      episode.env = i;
      ++episodes[static_cast<size_t>(i)];
      if (!plan(i, steps[static_cast<size_t>(i)], episodes[static_cast<size_t>(i)])) {
        active[static_cast<size_t>(i)] = 0;
        --num_active;
      }
    }
  }
  return true;
}

double EpisodeTally::mean_return() const {
  if (returns.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(returns.begin(), returns.end(), 0.0) / static_cast<double>(returns.size());
}

double EpisodeTally::std_return() const {
  const double mean = mean_return();
  double var = 0.0;
  for (double r : returns) var += (r - mean) * (r - mean);
  return std::sqrt(var / static_cast<double>(returns.size()));  // NaN when empty, as the mean
}

double EpisodeTally::success_rate() const {
  if (returns.empty()) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(successes) / static_cast<double>(returns.size());
}

}  // namespace rlm::agents
