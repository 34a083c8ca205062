// Recurrent PPO with RLlib 2.3's semantics as POPGym runs it (docs/trainers/ppo.md), top to bottom in the order it
// runs: rollout -> GAE -> whole-episode sequences -> epochs of minibatches -> adaptive KL -> logging/checkpoints.
//
// Choices that follow RLlib (old API stack, batch_mode = complete_episodes):
// - every env carries its own recurrent state during the rollout (the model is stepped with T = 1) and the state is
//   reset where an episode starts;
// - each iteration starts fresh episodes and every env runs until it has at least steps_per_env steps AND its
//   episode has ended, so the batch holds complete episodes only (an env that is done idles; its steps are dropped);
// - GAE per episode, bootstrapping with V(final obs) where the env truncated and 0 where it terminated;
// - advantages standardised over the whole batch; every episode is one sequence, zero-padded to the longest one
//   (T_pad), masked in the loss, in the order the episodes ended (RLlib's sample collector adds an episode to the
//   batch when it is done);
// - minibatches count real steps, as RLlib's loader does (agents/minibatches.hpp): max(1, floor(steps / mb)) of them,
//   each the whole sequences covering about minibatch_size real steps; the composition is fixed, only the order is
//   permuted in each epoch, and the steps after the last full minibatch are not trained on;
// - loss = mean(-min(A r, A clip(r)) + vf_coeff clamp((V - V_targ)^2, 0, vf_clip) - ent_coeff H) + kl_coeff mean(KL),
//   kl_coeff x1.5 when the iteration's mean KL > 2 kl_target and x0.5 when < kl_target / 2.
// Every random stream is derived from (experiment.seed, iteration) at each iteration start, so a resumed run
// continues bitwise identically (same thread counts, CPU). Stops are honoured at every env step and minibatch, and
// a non-finite loss, gradient or parameter (or KL above algo.ppo.max_kl) stops the run before anything bad is saved
// (docs/ARCHITECTURE.md, "Reliability guarantees").
#include "agents/ppo.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <thread>

#include "agents/acting_graph.hpp"
#include "agents/checkpoint.hpp"
#include "agents/gae.hpp"
#include "agents/global_generator.hpp"
#include "agents/minibatches.hpp"
#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "core/metrics_logger.hpp"
#include "core/progress.hpp"
#include "core/run_output.hpp"
#include "core/seed.hpp"
#include "envs/registry.hpp"

namespace rlm::agents {
namespace fs = std::filesystem;
using torch::indexing::Slice;

// ---------------------------------------------------------------------------------------------------------------
// Rollout storage: [T, N, ...] CPU tensors, T = steps_per_env + max episode length (the complete-episodes tail).
struct PpoTrainer::Rollout {
  torch::Tensor obs, actions, log_probs, values, logits, rewards, starts, dones, terminated, bootstrap, valid;
  int64_t steps = 0;      ///< rows used
  EpisodeTally episodes;  ///< the episodes that ended in this rollout
  std::vector<int64_t> episode_lengths;
};

// One training batch of whole-episode sequences, padded to T_pad: [T_pad, S, ...] on the training device.
struct PpoTrainer::Batch {
  torch::Tensor obs, actions, log_probs, logits, advantages, value_targets, mask, starts;
  int64_t num_sequences = 0;
  std::vector<int64_t> seq_lens;  ///< real steps of each sequence
};

struct PpoTrainer::LossStats {
  double policy_loss = 0, value_loss = 0, entropy = 0, kl = 0, total_loss = 0;
  double clip_fraction = 0;  ///< share of valid steps whose ratio lies outside [1 − clip, 1 + clip]
  /// max |ratio − 1| over the iteration's first minibatch, before any update: how far the training forward
  /// (sequences, train mode) is from the acting one (T = 1 steps, eval mode). ~1e-6 for deterministic memories;
  /// larger by design where training draws randomness that acting does not (SHM's θ rows, spiking thresholds).
  double first_ratio_deviation = 0;
  double grad_norm = 0;  ///< global gradient norm before clipping
  int64_t minibatches = 0;
};

PpoTrainer::PpoTrainer(const Config& config, fs::path run_dir)
    : config_(config), run_dir_(std::move(run_dir)), device_(resolve_device(config.experiment.device)) {
  set_torch_threads(config_.experiment.torch_threads);
  set_cpu_matmul(config_.experiment.cpu_matmul);
  const auto seed = static_cast<uint64_t>(config_.experiment.seed);
  try {
    envs::canonical_env_id(config_.env.id);
  } catch (const EnvError& e) {
    throw ConfigValueError("env.id", e.what());
  }
  try {
    envs_ = std::make_unique<envs::VecEnv>(config_.env.id, config_.env.num_envs, config_.env.num_threads,
                                           derive_seed(seed, {kEnvStream}), envs::wrapper_options(config_.env),
                                           config_.env.options);
  } catch (const EnvOptionError& e) {
    throw ConfigValueError("env." + e.option, e.what());
  }
  if (envs_->max_episode_steps() > config_.algo.ppo.max_seq_len) {
    throw ConfigValueError(
        "algo.ppo.max_seq_len",
        fmt::format("algo.ppo.max_seq_len = {} is shorter than the longest episode of {} ({} steps); "
                    "whole-episode sequences need max_seq_len >= {}",
                    config_.algo.ppo.max_seq_len, config_.env.id, envs_->max_episode_steps(),
                    envs_->max_episode_steps()));
  }
  action_spec_ = ActionSpec::from_space(envs_->action_space(), config_.env.id);
  {  // the rollout tensors of collect_rollout(), float32 and bool per step and env: refuse before the first one
    const double steps = static_cast<double>(config_.env.num_envs) *
                         static_cast<double>(config_.algo.ppo.steps_per_env + envs_->max_episode_steps());
    const double bytes_per_step =
        4.0 * static_cast<double>(envs_->obs_size() + action_spec_.action_size() + action_spec_.num_logits() + 4) + 4.0;
    check_fits_in_memory("algo.ppo.steps_per_env",
                         fmt::format("env.num_envs * algo.ppo.steps_per_env = {} * {}", config_.env.num_envs,
                                     config_.algo.ppo.steps_per_env),
                         "the rollout", steps * bytes_per_step);
  }
  {
    const std::lock_guard lock(global_generator_mutex());
    torch::manual_seed(derive_seed(seed, {kTorchStream}));  // parameter initialisation
    model_ = ActorCritic(observation_layout(*envs_, config_.model, config_.env.markovian == "partial"),
                         action_spec_.num_logits(), config_.model);
  }
  model_->to(device_);
  optimizer_ = std::make_unique<torch::optim::Adam>(
      model_->parameters(), torch::optim::AdamOptions(config_.algo.ppo.lr).eps(config_.algo.ppo.adam_eps));
  kl_coeff_ = config_.algo.ppo.kl_coeff;
}

PpoTrainer::~PpoTrainer() = default;

nlohmann::json PpoTrainer::trainer_state() const {
  return {{"format", kCheckpointFormat},
          {"iteration", iteration_},
          {"env_steps", env_steps_},
          {"episodes", episodes_},
          {"kl_coeff", kl_coeff_},
          {"elapsed_seconds", elapsed_seconds_},
          {"env_episode_counters", envs_->episode_counters()}};
}

ResumeReport PpoTrainer::resume() {
  ResumeReport report;
  const auto loaded = load_newest_valid_checkpoint(
      run_dir_, *model_, optimizer_.get(),
      [&](const fs::path& path, const std::string& reason) { report.skipped.emplace_back(path, reason); });
  report.checkpoint = loaded.path;
  // The loaded optimizer state carries the old run's options; a resume may change these two (resume_policy.hpp).
  for (auto& group : optimizer_->param_groups()) {
    auto& options = static_cast<torch::optim::AdamOptions&>(group.options());
    options.lr(config_.algo.ppo.lr);
    options.eps(config_.algo.ppo.adam_eps);
  }
  restore_trainer_state(loaded, [&](const nlohmann::json& state) {
    iteration_ = state.at("iteration");
    env_steps_ = state.at("env_steps");
    episodes_ = state.at("episodes");
    kl_coeff_ = state.at("kl_coeff");
    elapsed_seconds_ = state.at("elapsed_seconds");
    envs_->set_episode_counters(state.at("env_episode_counters").get<std::vector<uint64_t>>());
  });
  saved_iteration_ = iteration_;
  MetricsLogger::truncate_after(run_dir_, env_steps_);  // rows logged after this checkpoint will be logged again
  return report;
}

void PpoTrainer::save(bool force) {
  const auto& ck = config_.checkpoint;
  if (!force && iteration_ % ck.every != 0) return;
  save_checkpoint(checkpoint_path(run_dir_, iteration_), *model_, *optimizer_, trainer_state());
  saved_iteration_ = iteration_;
  prune_checkpoints(run_dir_, ck.keep_last);
}

void PpoTrainer::diverged(const std::string& what) const {
  throw DivergenceError(fmt::format("training diverged in iteration {}: {}", iteration_ + 1, what));
}

// ---------------------------------------------------------------------------------------------------------------
namespace {

/// torch::nn::utils::clip_grad_norm_ with the L2 norm, without its closing item(): the global norm stays on the device
/// (a 0-dim tensor), so that the update reads it with the loss in one wait. The same operations in the same order,
/// so the same gradients and norm; with no limit (max_norm <= 0) the clipping, a multiply by exactly 1, is left out.
torch::Tensor clip_grad_norm(const std::vector<torch::Tensor>& parameters, double max_norm) {
  std::vector<torch::Tensor> grads, norms;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return torch::zeros({}, torch::kFloat32);
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(g.data().norm(2.0));
  const auto total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2.0);
  if (max_norm > 0) {
    const auto coefficient = torch::clamp(max_norm / (total + 1e-6), std::nullopt, 1.0);
    for (auto& g : grads) g.data().mul_(coefficient);
  }
  return total;
}

/// PPO's acting policy inside a rollout: steps the model with T = 1 and records, per step, what the update needs
/// (obs, starts, actions, log-probs, values, logits) into the rollout's row t.
class RolloutPolicy : public ActingPolicy {
 public:
  struct Rows {
    torch::Tensor obs, starts, actions, log_probs, values, logits;
  };
  /// `graph`: steps replayed from it where it can (null: eager).
  RolloutPolicy(ActorCritic model, const ActionSpec& spec, torch::Device device, Rows rows, ActingGraph* graph)
      : model_(std::move(model)), spec_(spec), device_(device), rows_(std::move(rows)), graph_(graph) {}
  void begin(int64_t num_envs) override {
    state_ = model_->initial_state(num_envs, device_);
    if (graph_ != nullptr) graph_->set_state(state_);
  }
  torch::Tensor act(const torch::Tensor& obs, const torch::Tensor&, const torch::Tensor&, const torch::Tensor& starts,
                    bool, const torch::Generator& generator) override {
    auto obs_t = rows_.obs[t_];
    obs_t.copy_(obs);
    rows_.starts[t_].copy_(starts);
    out_ = graph_ != nullptr ? graph_->step(obs_t, starts)
                             : model_->forward(obs_t.unsqueeze(0).to(device_), state_, starts.unsqueeze(0).to(device_));
    auto logits = out_.logits[0].to(torch::kCPU);
    ActionDistribution dist(spec_, logits);
    auto actions = dist.sample(generator);
    rows_.actions[t_].copy_(actions);
    rows_.log_probs[t_].copy_(dist.log_prob(actions));
    rows_.values[t_].copy_(out_.values[0]);
    rows_.logits[t_].copy_(logits);
    ++t_;
    return actions;
  }
  /// V(obs) for one step from the memory after the step just taken (bootstrap values of truncated episodes).
  torch::Tensor values_after_step(const torch::Tensor& obs) {
    const int64_t n = obs.size(0);
    return model_->forward(obs.unsqueeze(0).to(device_), out_.state, torch::zeros({1, n}, torch::kBool).to(device_))
        .values[0];
  }
  /// Called once the step is recorded: the state carried to the next step.
  void advance() {
    if (graph_ != nullptr) {
      graph_->advance();
    } else {
      state_ = memory::detach(out_.state);
    }
  }

 private:
  ActorCritic model_;
  const ActionSpec& spec_;
  torch::Device device_;
  Rows rows_;
  ActingGraph* graph_;
  memory::MemoryState state_;
  ActorCriticOutput out_;
  int64_t t_ = 0;
};

}  // namespace

std::optional<PpoTrainer::Rollout> PpoTrainer::collect_rollout(const std::function<bool()>& stop_requested) {
  torch::NoGradGuard no_grad;
  // Acting runs the model in eval mode (the spiking cell's fixed threshold, spiking paper Eq. 8), updates in
  // training mode (its random threshold); the ratio offset at the first epoch is accepted (docs/trainers/ppo.md).
  model_->eval();
  struct TrainModeOnExit {
    ActorCritic model;
    ~TrainModeOnExit() { model->train(); }
  } restore{model_};
  const int64_t n = envs_->num_envs();
  const int64_t obs_size = envs_->obs_size();
  const int64_t components = action_spec_.action_size();
  const int64_t capacity = config_.algo.ppo.steps_per_env + envs_->max_episode_steps();
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const auto flag = torch::TensorOptions().dtype(torch::kBool);

  Rollout r;
  r.obs = torch::zeros({capacity, n, obs_size}, f32);
  r.actions = torch::zeros({capacity, n, components}, f32);
  r.log_probs = torch::zeros({capacity, n}, f32);
  r.values = torch::zeros({capacity, n}, f32);
  r.logits = torch::zeros({capacity, n, action_spec_.num_logits()}, f32);
  r.rewards = torch::zeros({capacity, n}, f32);
  r.bootstrap = torch::zeros({capacity, n}, f32);
  r.starts = torch::zeros({capacity, n}, flag);
  r.dones = torch::zeros({capacity, n}, flag);
  r.terminated = torch::zeros({capacity, n}, flag);
  r.valid = torch::zeros({capacity, n}, flag);

  torch::Generator generator = at::detail::createCPUGenerator(
      derive_seed(static_cast<uint64_t>(config_.experiment.seed), {kTorchStream, static_cast<uint64_t>(iteration_)}));
  seed_memory_streams(*model_,
                      derive_seed(static_cast<uint64_t>(config_.experiment.seed),
                                  {kMemoryStream, 0, static_cast<uint64_t>(iteration_)}),
                      config_.experiment.memory_draws_on_device);
  if (acting_graph_ == nullptr && device_.is_cuda() && config_.experiment.cuda_graphs)
    acting_graph_ = std::make_unique<ActingGraph>(model_, device_, n, obs_size);
  RolloutPolicy policy(model_, action_spec_, device_, {r.obs, r.starts, r.actions, r.log_probs, r.values, r.logits},
                       acting_graph_.get());

  // RLlib's complete_episodes: every env plays until it has steps_per_env steps and its episode has ended.
  const int64_t steps_per_env = config_.algo.ppo.steps_per_env;
  const auto plan = [&](int, int64_t steps, int64_t) { return steps < steps_per_env; };
  const int64_t target = steps_per_env * n;
  const auto on_step = [&](const StepView& step) {
    const int64_t t = step.t;
    if (progress_) {
      progress_->phase([&] {
        return fmt::format("iter {}: rollout {}/{} steps", iteration_ + 1, format_count(std::min((t + 1) * n, target)),
                           format_count(target));
      });
    }
    auto* valid_ptr = r.valid[t].data_ptr<bool>();
    auto* done_ptr = r.dones[t].data_ptr<bool>();
    auto* term_ptr = r.terminated[t].data_ptr<bool>();
    std::copy(step.rewards.begin(), step.rewards.end(), r.rewards[t].data_ptr<float>());
    bool any_truncated = false;
    for (int64_t b = 0; b < n; ++b) {
      valid_ptr[b] = step.active[static_cast<size_t>(b)] != 0;
      done_ptr[b] = step.terminated[b] || step.truncated[b];
      term_ptr[b] = step.terminated[b];
      any_truncated |= valid_ptr[b] && step.truncated[b] && !step.terminated[b];
    }
    // Bootstrap values for truncated episodes: V(final obs) given the memory after this step.
    if (any_truncated) {
      const auto final_obs = torch::from_blob(const_cast<float*>(step.final_obs.data()), {n, obs_size}, f32);
      r.bootstrap[t].copy_(policy.values_after_step(final_obs));
    }
    policy.advance();
    r.steps = t + 1;
  };
  const bool complete = run_episodes(*envs_, policy, action_spec_, plan, generator,
                                     [&](EpisodeRecord&& episode) { r.episodes.add(episode); },
                                     {.stop = stop_requested, .on_step = on_step});
  if (acting_graph_ != nullptr && !acting_reported_ && r.steps > 0) {
    acting_reported_ = true;
    if (acting_graph_->replaying()) {
      fmt::print(run_output(), "[train] acting replays one CUDA graph per step (experiment.cuda_graphs)\n");
    } else {
      fmt::print(run_output(), "[train] acting runs eagerly: {}\n", acting_graph_->eager_reason());
    }
  }
  if (!complete) return std::nullopt;
  return r;
}

// ---------------------------------------------------------------------------------------------------------------
PpoTrainer::Batch PpoTrainer::make_batch(Rollout& r) const {
  const int64_t n = envs_->num_envs();
  const auto valid = r.valid.accessor<bool, 2>();
  const auto dones = r.dones.accessor<bool, 2>();
  const auto terminated = r.terminated.accessor<bool, 2>();
  const auto rewards = r.rewards.accessor<float, 2>();
  const auto values = r.values.accessor<float, 2>();
  const auto bootstrap = r.bootstrap.accessor<float, 2>();
  auto advantages = torch::zeros_like(r.values);
  auto adv = advantages.accessor<float, 2>();

  // Episodes are contiguous runs in each env column, in collection order.
  struct Episode {
    int64_t env, begin, length;
  };
  std::vector<Episode> episodes;
  std::vector<float> ep_rewards, ep_values, ep_adv;
  for (int64_t b = 0; b < n; ++b) {
    int64_t begin = 0;
    for (int64_t t = 0; t < r.steps && valid[t][b]; ++t) {
      if (!dones[t][b]) continue;
      const int64_t length = t + 1 - begin;
      ep_rewards.resize(length), ep_values.resize(length), ep_adv.resize(length);
      for (int64_t i = 0; i < length; ++i) {
        ep_rewards[i] = rewards[begin + i][b];
        ep_values[i] = values[begin + i][b];
      }
      const float last = terminated[t][b] ? 0.0f : bootstrap[t][b];
      compute_gae(ep_rewards, ep_values, last, static_cast<float>(config_.algo.ppo.gamma),
                  static_cast<float>(config_.algo.ppo.gae_lambda), ep_adv);
      for (int64_t i = 0; i < length; ++i) adv[begin + i][b] = ep_adv[i];
      episodes.push_back({b, begin, length});
      begin = t + 1;
    }
  }
  // Batch order = the order episodes ended (then env index), as RLlib's collector appends finished episodes.
  std::stable_sort(episodes.begin(), episodes.end(), [](const Episode& x, const Episode& y) {
    const int64_t end_x = x.begin + x.length, end_y = y.begin + y.length;
    return end_x != end_y ? end_x < end_y : x.env < y.env;
  });
  const auto value_targets = advantages + r.values;

  int64_t t_pad = 0;
  for (const auto& e : episodes) t_pad = std::max(t_pad, e.length);
  const int64_t s = static_cast<int64_t>(episodes.size());
  auto index = torch::zeros({t_pad, s}, torch::kInt64);
  auto mask = torch::zeros({t_pad, s}, torch::kBool);
  auto index_a = index.accessor<int64_t, 2>();
  auto mask_a = mask.accessor<bool, 2>();
  for (int64_t j = 0; j < s; ++j) {
    for (int64_t i = 0; i < episodes[j].length; ++i) {
      index_a[i][j] = (episodes[j].begin + i) * n + episodes[j].env;
      mask_a[i][j] = true;
    }
  }
  const auto flat_index = index.flatten();
  auto gather = [&](const torch::Tensor& x) {
    auto flat = x.flatten(0, 1).index_select(0, flat_index);
    auto shape = x.sizes().vec();
    shape[0] = t_pad;
    shape[1] = s;
    auto out = flat.reshape(shape);
    // Zero the padding so that nothing from a real step leaks into it.
    auto m = mask;
    while (m.dim() < out.dim()) m = m.unsqueeze(-1);
    return (out * m.to(out.dtype())).to(device_);
  };

  Batch batch;
  batch.num_sequences = s;
  for (const auto& e : episodes) batch.seq_lens.push_back(e.length);
  batch.obs = gather(r.obs);
  batch.actions = gather(r.actions);
  batch.log_probs = gather(r.log_probs);
  batch.logits = gather(r.logits);
  batch.value_targets = gather(value_targets);
  batch.mask = mask.to(device_);
  auto a = gather(advantages);
  if (config_.algo.ppo.normalize_advantages) {
    // RLlib's standardized(): population std over every real step, floored at 1e-4.
    const auto real = a.masked_select(batch.mask);
    const auto mean = real.mean();
    const auto std = real.std(/*unbiased=*/false).clamp_min(1e-4);
    a = ((a - mean) / std) * batch.mask.to(a.dtype());
  }
  batch.advantages = a;
  batch.starts = torch::zeros({t_pad, s}, torch::kBool).to(device_);
  batch.starts[0].fill_(true);
  return batch;
}

// ---------------------------------------------------------------------------------------------------------------
std::optional<PpoTrainer::LossStats> PpoTrainer::update(const Batch& batch,
                                                        const std::function<bool()>& stop_requested) {
  const PpoConfig& algo = config_.algo.ppo;
  const std::vector<SequenceRange> minibatches = rllib_minibatches(batch.seq_lens, algo.minibatch_size);
  const auto num_minibatches = static_cast<int64_t>(minibatches.size());
  std::mt19937_64 order_rng(derive_seed(static_cast<uint64_t>(config_.experiment.seed),
                                        {kMinibatchStream, static_cast<uint64_t>(iteration_)}));
  std::vector<int64_t> order(num_minibatches);
  seed_memory_streams(*model_,
                      derive_seed(static_cast<uint64_t>(config_.experiment.seed),
                                  {kMemoryStream, 1, static_cast<uint64_t>(iteration_)}),
                      config_.experiment.memory_draws_on_device);
  LossStats stats;
  torch::Tensor sums, first_deviation;  // on the device: see below
  const auto parameters = model_->parameters();

  for (int epoch = 0; epoch < algo.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), order_rng);
    for (int64_t k = 0; k < num_minibatches; ++k) {
      if (stop_requested && stop_requested()) return std::nullopt;
      if (progress_) {
        progress_->phase([&] {
          return fmt::format("iter {}: update epoch {}/{}, minibatch {}/{}", iteration_ + 1, epoch + 1, algo.epochs,
                             k + 1, num_minibatches);
        });
      }
      const int64_t mb = order[static_cast<size_t>(k)];
      const SequenceRange range = minibatches[static_cast<size_t>(mb)];
      if (range.empty()) continue;  // one sequence longer than the minibatch spans it (RLlib: an empty minibatch)
      // Padding past the minibatch's longest sequence is cut: the models are causal and padding is masked, so the
      // result is the same as RLlib's whole-batch T_pad, for less work.
      const int64_t t_max = *std::max_element(batch.seq_lens.begin() + range.begin, batch.seq_lens.begin() + range.end);
      const auto at = [&](const torch::Tensor& x) { return x.index({Slice(0, t_max), Slice(range.begin, range.end)}); };
      const auto mask = at(batch.mask);
      const auto obs = at(batch.obs);
      const int64_t width = obs.size(1);
      auto out = model_->forward(obs, model_->initial_state(width, device_), at(batch.starts));

      ActionDistribution dist(action_spec_, out.logits);
      ActionDistribution old_dist(action_spec_, at(batch.logits));
      const auto valid = mask.to(torch::kFloat32);
      const auto count = valid.sum();
      auto mean_valid = [&](const torch::Tensor& x) { return (x * valid).sum() / count; };

      const auto advantages = at(batch.advantages);
      const auto ratio = torch::exp(dist.log_prob(at(batch.actions)) - at(batch.log_probs));
      const auto surrogate =
          torch::min(advantages * ratio, advantages * ratio.clamp(1.0 - algo.clip_param, 1.0 + algo.clip_param));
      const auto value_error = (out.values - at(batch.value_targets)).pow(2);
      const auto value_loss = value_error.clamp(0.0, algo.vf_clip_param);
      const auto entropy = dist.entropy();
      const auto kl = old_dist.kl(dist);
      const auto policy_loss = mean_valid(-surrogate);
      const auto deviation = (ratio - 1).abs();
      const auto total = mean_valid(-surrogate + algo.vf_loss_coeff * value_loss - algo.entropy_coeff * entropy) +
                         kl_coeff_ * mean_valid(kl);

      optimizer_->zero_grad();
      total.backward();
      const auto norm = clip_grad_norm(parameters, algo.grad_clip);
      // Divergence checks before anything changes the parameters: a non-finite loss or gradient never reaches them.
      // The loss and the norm come to the host together, the minibatch's one wait for the device.
      const auto checked = torch::stack({total.detach().to(torch::kDouble), norm.to(torch::kDouble)}).to(torch::kCPU);
      const double total_value = checked[0].item<double>(), grad_norm = checked[1].item<double>();
      if (!std::isfinite(total_value)) {
        diverged(fmt::format("the loss is {} (epoch {}, minibatch {})", total_value, epoch + 1, k + 1));
      }
      if (!std::isfinite(grad_norm)) {
        diverged(fmt::format("the gradient norm is {} (epoch {}, minibatch {})", grad_norm, epoch + 1, k + 1));
      }
      optimizer_->step();

      stats.grad_norm += grad_norm;
      stats.total_loss += total_value;
      {
        // The other statistics are summed on the device, in float64 and in minibatch order as the host would, and
        // read once after the update.
        torch::NoGradGuard no_grad;
        const auto parts = torch::stack({policy_loss, mean_valid(value_loss), mean_valid(entropy), mean_valid(kl),
                                         mean_valid((deviation > algo.clip_param).to(torch::kFloat32))})
                               .to(torch::kDouble);
        sums = sums.defined() ? sums + parts : parts;
        if (stats.minibatches == 0) first_deviation = (deviation * valid).max();
      }
      ++stats.minibatches;
    }
  }
  if (sums.defined()) {
    const auto totals = sums.to(torch::kCPU);
    const auto* sum = totals.data_ptr<double>();
    stats.policy_loss = sum[0], stats.value_loss = sum[1], stats.entropy = sum[2], stats.kl = sum[3];
    stats.clip_fraction = sum[4];
    stats.first_ratio_deviation = first_deviation.item<double>();
  }
  const double k = static_cast<double>(std::max<int64_t>(1, stats.minibatches));
  stats.policy_loss /= k, stats.value_loss /= k, stats.entropy /= k, stats.kl /= k, stats.total_loss /= k;
  stats.clip_fraction /= k, stats.grad_norm /= k;
  for (const auto& p : parameters) {
    if (!torch::isfinite(p).all().item<bool>()) diverged("a parameter is not finite after the update");
  }
  if (algo.max_kl > 0 && !(stats.kl <= algo.max_kl)) {
    diverged(fmt::format("the mean KL of the update is {:.4g}, above algo.ppo.max_kl = {}", stats.kl, algo.max_kl));
  }
  return stats;
}

// ---------------------------------------------------------------------------------------------------------------
TrainSummary PpoTrainer::train(const std::function<bool()>& stop_requested) {
  if (!metrics_) metrics_ = std::make_unique<MetricsLogger>(run_dir_, config_.logging.tensorboard);
  ProgressLine progress(config_.algo.total_steps, config_.logging.console, run_output(),
                        config_.logging.progress_seconds);
  progress_ = &progress;
  struct ClearOnExit {
    ProgressLine*& p;
    ~ClearOnExit() { p = nullptr; }
  } clear_progress{progress_};
  TrainSummary summary;
  while (env_steps_ < config_.algo.total_steps) {
    const auto start = std::chrono::steady_clock::now();
    // The state this iteration starts from, kept only while it is not on disk: a stop inside the iteration writes
    // it, so the resumed run repeats the iteration exactly (bitwise) instead of losing every iteration since the
    // last checkpoint.
    std::string start_state;
    if (saved_iteration_ != iteration_) start_state = checkpoint_bytes(*model_, *optimizer_, trainer_state());
    const auto save_start_state = [&] {
      if (start_state.empty()) return;
      write_checkpoint(checkpoint_path(run_dir_, iteration_), start_state);
      saved_iteration_ = iteration_;
      prune_checkpoints(run_dir_, config_.checkpoint.keep_last);
    };
    std::optional<LossStats> update_stats;
    auto rollout = collect_rollout(stop_requested);
    const auto rollout_end = std::chrono::steady_clock::now();
    if (rollout) {
      const Batch batch = make_batch(*rollout);
      try {
        update_stats = update(batch, stop_requested);
      } catch (const DivergenceError& e) {
        // The bad state is never written; the state this iteration started from (finite, checked at the end of
        // the last one) becomes the newest checkpoint, so --resume with a lower lr starts right before the blow-up.
        save_start_state();
        const auto last = latest_checkpoint(run_dir_);
        throw DivergenceError(
            fmt::format("{}; nothing of it was checkpointed, {} (try a lower algo.ppo.lr or set "
                        "algo.ppo.grad_clip)",
                        e.what(),
                        last ? fmt::format("--resume continues from {}", last->string())
                             : std::string("and the run has no checkpoint")));
      }
    }
    if (!update_stats) {  // stopped inside the iteration
      save_start_state();
      summary.interrupted = true;
      break;
    }
    const LossStats& stats = *update_stats;
    const int64_t steps = rollout->valid.sum().item<int64_t>();

    // Adaptive KL penalty (RLlib's update_kl), once per iteration from the mean KL over its minibatches.
    if (stats.kl > 2.0 * config_.algo.ppo.kl_target)
      kl_coeff_ *= 1.5;
    else if (stats.kl < 0.5 * config_.algo.ppo.kl_target)
      kl_coeff_ *= 0.5;

    ++iteration_;
    env_steps_ += steps;
    const auto& returns = rollout->episodes.returns;
    episodes_ += static_cast<int64_t>(returns.size());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    elapsed_seconds_ += seconds;
    const double mean_return = rollout->episodes.mean_return();
    const double sps = steps / seconds;
    const double rollout_seconds = std::chrono::duration<double>(rollout_end - start).count();
    summary.rollout_seconds += rollout_seconds;
    summary.update_seconds += seconds - rollout_seconds;
    if (iteration_ % config_.logging.every == 0 || env_steps_ >= config_.algo.total_steps) {
      std::vector<std::pair<std::string, double>> scalars = {
          {"charts/episode_return_mean", mean_return},
          {"charts/episodes", static_cast<double>(returns.size())},
          {"charts/episode_length_mean", static_cast<double>(steps) / std::max<size_t>(1, returns.size())},
          {"charts/iteration", static_cast<double>(iteration_)},
          {"charts/steps_per_second", sps},
          {"charts/rollout_seconds", rollout_seconds},
          {"charts/iteration_seconds", seconds},
          {"losses/policy_loss", stats.policy_loss},
          {"losses/value_loss", stats.value_loss},
          {"losses/entropy", stats.entropy},
          {"losses/kl", stats.kl},
          {"losses/kl_coeff", kl_coeff_},
          {"losses/total_loss", stats.total_loss},
          {"losses/clip_fraction", stats.clip_fraction},
          {"losses/first_ratio_deviation", stats.first_ratio_deviation},
          {"losses/grad_norm", stats.grad_norm},
          {"losses/sgd_steps", static_cast<double>(stats.minibatches)}};
      if (envs_->reports_success()) {
        scalars.emplace_back("charts/success_rate", rollout->episodes.success_rate());
      }
      metrics_->log(env_steps_, scalars);
    }
    progress.update(env_steps_, env_steps_ / std::max(1e-9, elapsed_seconds_), mean_return,
                    static_cast<int64_t>(returns.size()));
    summary.last_return_mean = mean_return;
    summary.interrupted = env_steps_ < config_.algo.total_steps && stop_requested && stop_requested();
    save(/*force=*/env_steps_ >= config_.algo.total_steps || summary.interrupted);
    if (summary.interrupted) break;
  }
  progress.finish();
  summary.iterations = iteration_;
  summary.env_steps = env_steps_;
  return summary;
}

// ---------------------------------------------------------------------------------------------------------------
namespace {

/// PPO's ActorCritic acting: logits from the model stepped with T = 1, sampled or the most likely action.
class ActorCriticPolicy : public ActingPolicy {
 public:
  ActorCriticPolicy(ActorCritic model, ActionSpec spec, torch::Device device)
      : model_(std::move(model)), spec_(std::move(spec)), device_(device) {}
  void begin(int64_t num_envs) override { state_ = model_->initial_state(num_envs, device_); }
  torch::Tensor act(const torch::Tensor& obs, const torch::Tensor&, const torch::Tensor&, const torch::Tensor& starts,
                    bool deterministic, const torch::Generator& generator) override {
    auto out = model_->forward(obs.unsqueeze(0).to(device_), state_, starts.unsqueeze(0).to(device_));
    state_ = out.state;
    ActionDistribution dist(spec_, out.logits[0].to(torch::kCPU));
    return deterministic ? dist.mode() : dist.sample(generator);
  }

 private:
  ActorCritic model_;
  ActionSpec spec_;
  torch::Device device_;
  memory::MemoryState state_;
};

}  // namespace

PolicyModel ppo_policy_model(const Config& config, const ObservationLayout& obs, const ActionSpec& spec,
                             const torch::Device& device) {
  ActorCritic model(obs, spec.num_logits(), config.model);
  return {model.ptr(), [=] { return std::make_unique<ActorCriticPolicy>(model, spec, device); }};
}

}  // namespace rlm::agents
