// The off-policy trainer's evaluation on its own envs (task_split_eval.hpp).
#include "agents/off_policy/task_split_eval.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include "agents/acting.hpp"
#include "agents/off_policy.hpp"
#include "core/seed.hpp"
#include "envs/registry.hpp"

namespace rlm::agents {

TaskSplitEvaluator::Result TaskSplitEvaluator::Result::none() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {nan, nan, nan, nan, nan};
}

TaskSplitEvaluator::TaskSplitEvaluator(const Config& config, uint64_t seed)
    : seed_(seed),
      memory_draws_on_device_(config.experiment.memory_draws_on_device),
      eval_episodes_(config.algo.off_policy.eval_episodes),
      eval_each_task_(config.algo.off_policy.eval_each_task) {
  const auto options = envs::wrapper_options(config.env);
  const int num_envs = std::min(eval_episodes_, config.env.num_envs);
  const int threads = std::min(config.env.num_threads, num_envs);
  // The held-out tasks of envs with a task split (meta-RL); other envs do not read task_split.
  EnvOptions held_out = config.env.options;
  held_out.task_split = "eval";
  held_out_envs_ = std::make_unique<envs::VecEnv>(config.env.id, num_envs, threads, derive_seed(seed, {kEvalStream}),
                                                  options, held_out);
  if (const auto& read = envs::env_option_keys(config.env.id); std::ranges::find(read, "task_split") != read.end()) {
    train_split_envs_ = std::make_unique<envs::VecEnv>(
        config.env.id, num_envs, threads, derive_seed(seed, {kEvalStream, 1}), options, config.env.options);
  }
}

std::optional<TaskSplitEvaluator::Results> TaskSplitEvaluator::run(
    OffPolicyAgent& agent, const std::shared_ptr<const OffPolicyAlgorithm>& algorithm, const ActionSpec& spec,
    const torch::Device& device, int64_t episodes, const std::function<bool()>& stop) {
  const auto counters = held_out_envs_->episode_counters();
  Results results;
  const auto held_out = evaluate(*held_out_envs_, 0, agent, algorithm, spec, device, episodes, stop);
  if (!held_out) return std::nullopt;
  results.held_out = *held_out;
  if (train_split_envs_) {
    const auto train_split = evaluate(*train_split_envs_, 1, agent, algorithm, spec, device, episodes, stop);
    if (!train_split) {
      held_out_envs_->set_episode_counters(counters);
      return std::nullopt;
    }
    results.train_split = *train_split;
  }
  return results;
}

std::optional<TaskSplitEvaluator::Result> TaskSplitEvaluator::evaluate(
    envs::VecEnv& envs, uint64_t split, OffPolicyAgent& agent,
    const std::shared_ptr<const OffPolicyAlgorithm>& algorithm, const ActionSpec& spec, const torch::Device& device,
    int64_t episodes, const std::function<bool()>& stop) {
  const auto counters = envs.episode_counters();
  agent->eval();
  // Split 0 (the held-out envs) keeps the streams it had before the training-split evaluation existed.
  const auto count = static_cast<uint64_t>(episodes);
  const auto memory_stream =
      split == 0 ? derive_seed(seed_, {kMemoryStream, 2, count}) : derive_seed(seed_, {kMemoryStream, 2, count, split});
  const auto torch_stream =
      split == 0 ? derive_seed(seed_, {kEvalStream, count}) : derive_seed(seed_, {kEvalStream, count, split});
  seed_memory_streams(*agent, memory_stream, memory_draws_on_device_);
  OffPolicyActingPolicy policy(agent, algorithm, device);
  EpisodeTally tally;
  const auto generator = at::detail::createCPUGenerator(torch_stream);
  std::set<int> tasks_played;
  const auto on_episode = [&](EpisodeRecord&& r) {
    tally.add(r);
    if (r.task >= 0) tasks_played.insert(r.task);
  };
  bool complete = true;
  if (const int tasks = each_task_tasks(envs, split); tasks > 0) {
    // pomdp-baselines' evaluate(): every held-out task once, and train_tasks[:n_eval] once each. Round k pins task
    // k·N + i on env i; the rounds share the generator, which goes on from one to the next.
    const int n = envs.num_envs();
    for (int first = 0; first < tasks && complete; first += n) {
      std::vector<int64_t> quota(static_cast<size_t>(n), 0);
      for (int i = 0; i < n && first + i < tasks; ++i) {
        envs.pin_task(i, first + i);
        quota[static_cast<size_t>(i)] = 1;
      }
      complete = run_episodes(envs, policy, spec, quota, generator, on_episode, {.deterministic = true, .stop = stop});
    }
    for (int i = 0; i < n; ++i) envs.pin_task(i, -1);
  } else {
    complete = run_episodes(envs, policy, spec, episode_quota(eval_episodes_, envs.num_envs()), generator, on_episode,
                            {.deterministic = true, .stop = stop});
  }
  agent->train();
  if (!complete) {
    envs.set_episode_counters(counters);
    return std::nullopt;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return Result{tally.mean_return(), tally.std_return(), envs.reports_success() ? tally.success_rate() : nan,
                static_cast<double>(tally.episodes()),
                envs.split_size() > 0 ? static_cast<double>(tasks_played.size()) : nan};
}

int TaskSplitEvaluator::each_task_tasks(const envs::VecEnv& envs, uint64_t split) const {
  if (!eval_each_task_ || envs.split_size() == 0) return 0;
  // Split 0 is the held-out tasks; the training split is evaluated on as many of its tasks (all of them in the
  // SHM splits, where there are fewer training tasks).
  return split == 0 ? envs.split_size() : std::min(envs.split_size(), held_out_envs_->split_size());
}

void TaskSplitEvaluator::append_scalars(const Results& results, bool reports_success,
                                        std::vector<std::pair<std::string, double>>& scalars) const {
  if (reports_success) scalars.emplace_back("eval/success_rate", results.held_out.success_rate);
  if (!train_split_envs_) return;
  scalars.emplace_back("eval/train_tasks_episode_return_mean", results.train_split.return_mean);
  scalars.emplace_back("eval/tasks", results.held_out.distinct_tasks);
  scalars.emplace_back("eval/train_tasks", results.train_split.distinct_tasks);
  if (reports_success) scalars.emplace_back("eval/train_tasks_success_rate", results.train_split.success_rate);
}

void TaskSplitEvaluator::save_state(nlohmann::json& trainer_state) const {
  trainer_state["eval_episode_counters"] = held_out_envs_->episode_counters();
  trainer_state["train_split_eval_episode_counters"] =
      train_split_envs_ ? train_split_envs_->episode_counters() : std::vector<uint64_t>{};
}

void TaskSplitEvaluator::restore_state(const nlohmann::json& trainer_state) {
  held_out_envs_->set_episode_counters(trainer_state.at("eval_episode_counters").get<std::vector<uint64_t>>());
  if (train_split_envs_)
    train_split_envs_->set_episode_counters(
        trainer_state.at("train_split_eval_episode_counters").get<std::vector<uint64_t>>());
}

}  // namespace rlm::agents
