// Recurrent SAC / SAC-Discrete / TD3, top to bottom in the order it runs (twni2016/pomdp-baselines@28cb5dd, whose
// policies/learner.py runs the loop and policies/models/policy_rnn.py the update; docs/trainers/off_policy.md):
// 1. warm-up: the first algo.off_policy.warmup_episodes episodes use uniformly random actions;
// 2. each iteration every env plays one whole episode with the stochastic policy (the actor stepped with T = 1 and its
//    carried memory; previous action and reward 0 at an episode start), and the episodes go into the replay buffer in
//    the order they ended; with env.num_envs = 1 this is pomdp-baselines' num_rollouts_per_iter = 1;
// 3. updates: int(env_steps · ratio) once when the warm-up ends, then ceil(ratio · new steps) after each iteration
//    (pomdp-baselines' float num_updates_per_iter); each samples batch_size windows (episode_replay.hpp) and runs
//    critic step -> actor step -> Polyak update of the targets -> α step (policy_rnn.py's forward), every loss a
//    masked mean over real steps;
// 4. every eval_interval episodes and after the last iteration the deterministic policy plays eval_episodes episodes
//    on separate eval envs (the held-out tasks of envs with a task split, which are also evaluated on their training
//    tasks; off_policy/task_split_eval.hpp);
// 5. metrics (JSONL, CSV, TensorBoard), progress line, checkpoints.
// Time alignment (policy_rnn.py's update): a window of T steps is fed as T + 1 positions, o_0..o_T with the action
// and reward before each; Q is predicted at positions 0..T−1 and the target of position i reads position i + 1, so
// one pass over the window serves both. Every forward starts from the initial state (no stored hidden states);
// windows starting mid-episode see a zero previous action unless burn-in gives them their real context.
// Random streams: acting from (seed, iteration), window sampling, update noise and the memories' own draws from
// (seed, update number), eval from (seed, episode count), so a resume with the replay buffer in its checkpoint
// continues bitwise.
#include "agents/off_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "agents/checkpoint.hpp"
#include "agents/global_generator.hpp"
#include "agents/off_policy_losses.hpp"
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

namespace {

torch::Generator generator_for(uint64_t seed) { return at::detail::createCPUGenerator(seed); }

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
std::shared_ptr<const OffPolicyAlgorithm> off_policy_algorithm(const Config& config) {
  if (const TrainerRow& row = trainer_row(config.algo.type); row.off_policy) return row.off_policy(config);
  throw ConfigValueError("algo.type", fmt::format("algo.type = '{}' is not an off-policy trainer", config.algo.type));
}

OffPolicyAgentImpl::OffPolicyAgentImpl(const ObservationLayout& obs, const ActionSpec& spec, const Config& config,
                                       const OffPolicyAlgorithm& algorithm)
    : discrete_(!spec.continuous),
      num_actions_(spec.continuous ? static_cast<int64_t>(spec.low.size()) : spec.nvec.at(0)) {
  const auto& model = config.model;
  const auto& actor_memory = model.memory_of(model.off_policy.actor_memory);
  const auto& critic_memory = model.memory_of(model.off_policy.critic_memory);
  const auto head = algorithm.policy_head();
  actor = register_module("actor", RecurrentActor(obs, num_actions_, head, model.off_policy, actor_memory));
  critic = register_module("critic", RecurrentCritic(obs, num_actions_, discrete_, model.off_policy, critic_memory));
  critic_target =
      register_module("critic_target", RecurrentCritic(obs, num_actions_, discrete_, model.off_policy, critic_memory));
  copy_module_state(*critic_target, *critic);
  for (auto& p : critic_target->parameters()) p.set_requires_grad(false);
  if (head == PolicyHead::kDeterministic) {
    actor_target =
        register_module("actor_target", RecurrentActor(obs, num_actions_, head, model.off_policy, actor_memory));
    copy_module_state(*actor_target, *actor);
    for (auto& p : actor_target->parameters()) p.set_requires_grad(false);
  }
  // Tuned: log α starts at log(initial_alpha) (pomdp-baselines: 0, so α = 1, and entropy_alpha is ignored);
  // otherwise α = entropy_alpha throughout. Without a temperature (TD3) log α is 0 and never stepped.
  const TemperatureConfig* temperature = algorithm.temperature();
  const bool tuned = temperature != nullptr && temperature->automatic_entropy_tuning;
  const double start = temperature == nullptr ? 1.0 : tuned ? temperature->initial_alpha : temperature->entropy_alpha;
  log_alpha = register_parameter("log_alpha", torch::full({1}, std::log(std::max(start, 1e-30))),
                                 /*requires_grad=*/tuned);
}

torch::Tensor OffPolicyAgentImpl::network_actions(const torch::Tensor& actions) const {
  if (!discrete_) return actions;
  return torch::one_hot(actions.squeeze(-1).to(torch::kInt64), num_actions_).to(torch::kFloat32);
}

PolicyModel off_policy_policy_model(const Config& config, const ObservationLayout& obs, const ActionSpec& spec,
                                    const torch::Device& device) {
  const auto algorithm = off_policy_algorithm(config);
  OffPolicyAgent agent(obs, spec, config, *algorithm);
  return {agent.ptr(), [=] { return std::make_unique<OffPolicyActingPolicy>(agent, algorithm, device); }};
}

// ---------------------------------------------------------------------------------------------------------------
OffPolicyActingPolicy::OffPolicyActingPolicy(OffPolicyAgent agent, std::shared_ptr<const OffPolicyAlgorithm> algorithm,
                                             torch::Device device)
    : agent_(std::move(agent)), algorithm_(std::move(algorithm)), device_(device) {}

void OffPolicyActingPolicy::begin(int64_t num_envs) { state_ = agent_->actor->initial_state(num_envs, device_); }

torch::Tensor OffPolicyActingPolicy::act(const torch::Tensor& obs, const torch::Tensor& prev_actions,
                                         const torch::Tensor& prev_rewards, const torch::Tensor& starts,
                                         bool deterministic, const torch::Generator& generator) {
  SequenceInputs in{obs.unsqueeze(0).to(device_), agent_->network_actions(prev_actions).unsqueeze(0).to(device_),
                    prev_rewards.view({1, -1, 1}).to(device_), starts.unsqueeze(0).to(device_)};
  memory::MemoryState next;
  const auto out = agent_->actor->forward(in, state_, &next)[0].to(torch::kCPU);
  state_ = memory::detach(next);
  return algorithm_->act(out, deterministic, generator);
}

// ---------------------------------------------------------------------------------------------------------------
void OffPolicyUpdateStats::add(const OffPolicyUpdateStats& one) {
  critic_loss += one.critic_loss, actor_loss += one.actor_loss, alpha += one.alpha, alpha_loss += one.alpha_loss;
  entropy += one.entropy, q_mean += one.q_mean, updates += one.updates;
}

void OffPolicyUpdateStats::finish() {
  if (updates == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    critic_loss = actor_loss = alpha = alpha_loss = entropy = q_mean = nan;
    return;
  }
  const double k = static_cast<double>(updates);
  critic_loss /= k, actor_loss /= k, alpha /= k, alpha_loss /= k, entropy /= k, q_mean /= k;
}

nlohmann::json OffPolicyUpdateStats::to_json() const {
  return {{"critic_loss", critic_loss}, {"actor_loss", actor_loss}, {"alpha", alpha},    {"alpha_loss", alpha_loss},
          {"entropy", entropy},         {"q_mean", q_mean},         {"updates", updates}};
}

OffPolicyUpdateStats OffPolicyUpdateStats::from_json(const nlohmann::json& j) {
  OffPolicyUpdateStats s;
  s.critic_loss = j.at("critic_loss"), s.actor_loss = j.at("actor_loss"), s.alpha = j.at("alpha");
  s.alpha_loss = j.at("alpha_loss"), s.entropy = j.at("entropy"), s.q_mean = j.at("q_mean");
  s.updates = j.at("updates");
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
OffPolicyTrainer::OffPolicyTrainer(const Config& config, fs::path run_dir)
    : config_(config),
      run_dir_(std::move(run_dir)),
      device_(resolve_device(config.experiment.device)),
      algorithm_(off_policy_algorithm(config)) {
  set_torch_threads(config_.experiment.torch_threads);
  set_cpu_matmul(config_.experiment.cpu_matmul);
  const auto seed = static_cast<uint64_t>(config_.experiment.seed);
  const auto& op = config_.algo.off_policy;
  try {
    envs::canonical_env_id(config_.env.id);
  } catch (const EnvError& e) {
    throw ConfigValueError("env.id", e.what());
  }
  const auto options = envs::wrapper_options(config_.env);
  try {
    envs_ = std::make_unique<envs::VecEnv>(config_.env.id, config_.env.num_envs, config_.env.num_threads,
                                           derive_seed(seed, {kEnvStream}), options, config_.env.options);
  } catch (const EnvOptionError& e) {
    throw ConfigValueError("env." + e.option, e.what());
  }
  evaluator_ = std::make_unique<TaskSplitEvaluator>(config_, seed);
  spec_ = ActionSpec::from_space(envs_->action_space(), config_.env.id);
  algorithm_->check_action_space(spec_, config_.env.id);
  seq_len_ = op.sampled_seq_len > 0 ? op.sampled_seq_len : envs_->max_episode_steps();
  if (op.buffer_size < envs_->max_episode_steps()) {
    throw ConfigValueError("algo.off_policy.buffer_size",
                           fmt::format("algo.off_policy.buffer_size = {} cannot hold one episode of {} ({} steps)",
                                       op.buffer_size, config_.env.id, envs_->max_episode_steps()));
  }
  {
    // A lower bound of one update's memory per window step: the sampled batch, then what backpropagation keeps of
    // the actor's and the critic's forward passes, at the least their embeddings, memory outputs and MLP layers
    // (twin critics). The real use is several times larger (configs/offpolicy/sacd_gru_repeat_first.yaml, 64 wide:
    // peak RSS 2.7 GB at batch_size 2000 and 8.1 GB at 8000, about 4,300 floats per window step against ~600
    // here), so this refuses only what can never fit.
    const auto& m = config_.model.off_policy;
    double floats_per_step = static_cast<double>(envs_->obs_size() + 2 * spec_.action_size() + 5);
    const double embeddings = m.observation_embedding_size + m.action_embedding_size + m.reward_embedding_size;
    floats_per_step += 2 * embeddings + config_.model.memory_of(config_.model.off_policy.actor_memory).hidden_size +
                       config_.model.memory_of(config_.model.off_policy.critic_memory).hidden_size;
    for (int width : m.actor_layers) floats_per_step += width;
    for (int width : m.critic_layers) floats_per_step += 2.0 * width;
    check_fits_in_memory(
        "algo.off_policy.batch_size",
        fmt::format("algo.off_policy.batch_size = {} (windows of {} steps)", op.batch_size, seq_len_ + op.burn_in),
        "one update",
        4.0 * floats_per_step * static_cast<double>(op.batch_size) * static_cast<double>(seq_len_ + op.burn_in + 1));
  }
  {
    const std::lock_guard lock(global_generator_mutex());
    torch::manual_seed(derive_seed(seed, {kTorchStream}));  // parameter initialisation
    agent_ = OffPolicyAgent(observation_layout(*envs_, config_.model, config_.env.markovian == "partial"), spec_,
                            config_, *algorithm_);
  }
  agent_->to(device_);
  critic_optimizer_ =
      std::make_unique<torch::optim::Adam>(agent_->critic->parameters(), torch::optim::AdamOptions(op.lr));
  actor_optimizer_ =
      std::make_unique<torch::optim::Adam>(agent_->actor->parameters(), torch::optim::AdamOptions(op.lr));
  const TemperatureConfig* temperature = algorithm_->temperature();
  const double alpha_lr = temperature ? temperature->alpha_lr : TemperatureConfig{}.alpha_lr;
  alpha_optimizer_ = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{agent_->log_alpha},
                                                          torch::optim::AdamOptions(alpha_lr));
  target_entropy_ = algorithm_->target_entropy(agent_->num_actions());
  EpisodeReplayOptions replay_options;
  replay_options.capacity = op.buffer_size;
  replay_options.obs_size = envs_->obs_size();
  // Images (with one-hot extras) are stored a byte per value: a million Visual Match steps take 80 MB, not 320.
  replay_options.byte_observations = envs_->observation_space().dtype == envs::Space::DType::UInt8;
  replay_options.action_size = spec_.action_size();
  replay_ = std::make_unique<EpisodeReplay>(replay_options);
  next_eval_episodes_ = op.warmup_episodes + op.eval_interval;
}

OffPolicyTrainer::~OffPolicyTrainer() = default;

double OffPolicyTrainer::alpha() const { return agent_->log_alpha.exp().item<double>(); }

NamedOptimizers OffPolicyTrainer::optimizers() {
  return {{"critic_optimizer", critic_optimizer_.get()},
          {"actor_optimizer", actor_optimizer_.get()},
          {"alpha_optimizer", alpha_optimizer_.get()}};
}

void OffPolicyTrainer::diverged(const std::string& what) const {
  throw DivergenceError(
      fmt::format("training diverged at update {}: {}; nothing of it was checkpointed (try a lower "
                  "algo.off_policy.lr or set algo.off_policy.grad_clip)",
                  updates_ + 1, what));
}

nlohmann::json OffPolicyTrainer::trainer_state() const {
  nlohmann::json state = {{"format", kCheckpointFormat},
                          {"iteration", iteration_},
                          {"env_steps", env_steps_},
                          {"episodes", episodes_},
                          {"updates", updates_},
                          {"pending_updates", pending_updates_},
                          {"iteration_stats", iteration_stats_.to_json()},
                          {"iteration_return", iteration_return_},
                          {"iteration_length", iteration_length_},
                          {"iteration_success", iteration_success_},
                          {"next_eval_episodes", next_eval_episodes_},
                          {"elapsed_seconds", elapsed_seconds_},
                          {"tail_pending", tail_pending_},
                          {"tail_seconds", tail_seconds_},
                          {"tail_collect_seconds", tail_collect_seconds_},
                          {"env_episode_counters", envs_->episode_counters()},
                          {"replay_in_checkpoint", config_.checkpoint.replay_buffer}};
  evaluator_->save_state(state);
  return state;
}

void OffPolicyTrainer::save() {
  CheckpointBlobs blobs;
  if (config_.checkpoint.replay_buffer) blobs["replay_buffer"] = replay_->to_bytes();
  write_checkpoint(checkpoint_path(run_dir_, iteration_),
                   checkpoint_bytes(*agent_, optimizers(), trainer_state(), blobs));
  saved_iteration_ = iteration_;
  saved_updates_ = updates_;
  prune_checkpoints(run_dir_, config_.checkpoint.keep_last);
}

ResumeReport OffPolicyTrainer::resume() {
  ResumeReport report;
  CheckpointBlobs blobs;
  const auto loaded = load_newest_valid_checkpoint(
      run_dir_, *agent_, optimizers(),
      [&](const fs::path& path, const std::string& reason) { report.skipped.emplace_back(path, reason); }, &blobs);
  report.checkpoint = loaded.path;
  for (auto* optimizer : {critic_optimizer_.get(), actor_optimizer_.get()}) {
    for (auto& group : optimizer->param_groups())
      static_cast<torch::optim::AdamOptions&>(group.options()).lr(config_.algo.off_policy.lr);
  }
  restore_trainer_state(loaded, [&](const nlohmann::json& state) {
    iteration_ = state.at("iteration");
    env_steps_ = state.at("env_steps");
    episodes_ = state.at("episodes");
    updates_ = state.at("updates");
    pending_updates_ = state.at("pending_updates");
    iteration_stats_ = OffPolicyUpdateStats::from_json(state.at("iteration_stats"));
    iteration_return_ = state.at("iteration_return");
    iteration_length_ = state.at("iteration_length");
    iteration_success_ = state.at("iteration_success");
    next_eval_episodes_ = state.at("next_eval_episodes");
    elapsed_seconds_ = state.at("elapsed_seconds");
    tail_pending_ = state.at("tail_pending");
    tail_seconds_ = state.at("tail_seconds");
    tail_collect_seconds_ = state.at("tail_collect_seconds");
    envs_->set_episode_counters(state.at("env_episode_counters").get<std::vector<uint64_t>>());
    evaluator_->restore_state(state);
  });
  if (const auto it = blobs.find("replay_buffer"); it != blobs.end()) {
    try {
      replay_->from_bytes(it->second);
    } catch (const std::exception& e) {
      throw CheckpointError(
          fmt::format("checkpoint '{}': its replay buffer is unusable: {}", loaded.path.string(), e.what()));
    }
  } else {
    // Without a stored buffer the run continues from refilled warm-up episodes: same networks and counters, but
    // not bitwise the run that was stopped (checkpoint.replay_buffer: true gives that).
    const int64_t episodes = std::max<int64_t>(config_.algo.off_policy.warmup_episodes, 1);
    UniformRandomPolicy random(spec_);
    std::vector<EpisodeRecord> records;
    const auto generator = generator_for(stream({kTorchStream, static_cast<uint64_t>(iteration_), 1}));
    run_episodes(*envs_, random, spec_, episode_quota(episodes, envs_->num_envs()), generator,
                 [&](EpisodeRecord&& r) { records.push_back(std::move(r)); }, {.record_transitions = true});
    for (const auto& r : records) replay_->add_episode(r.obs, r.actions, r.rewards, r.terminated);
    fmt::print(run_output(),
               "[train] the checkpoint holds no replay buffer (checkpoint.replay_buffer: false): refilled it with {} "
               "random episodes; the resumed run is not bitwise the uninterrupted one\n",
               records.size());
  }
  saved_iteration_ = iteration_;
  saved_updates_ = updates_;
  MetricsLogger::truncate_after(run_dir_, env_steps_);
  return report;
}

// ---------------------------------------------------------------------------------------------------------------
ReplayBatch OffPolicyTrainer::sample_batch(int64_t update_index) const {
  std::mt19937_64 rng(stream({kReplayStream, static_cast<uint64_t>(update_index)}));
  const auto& op = config_.algo.off_policy;
  ReplayBatch batch = replay_->sample(op.batch_size, seq_len_, op.burn_in, op.sample_weight_baseline, rng);
  // Rows after the last real step of every window change no loss (the networks are causal, padding is masked):
  // cut them, so whole-episode windows cost the batch's longest episode, not the env's longest possible one.
  const auto rows_used = (batch.mask.sum(1) > 0).nonzero();
  const int64_t rows = rows_used.numel() > 0 ? rows_used.max().item<int64_t>() + 1 : 1;
  if (rows < batch.mask.size(0)) {
    const auto cut = [&](torch::Tensor& x, int64_t n) { x = x.index({Slice(0, n)}).contiguous(); };
    cut(batch.obs, rows + 1), cut(batch.prev_actions, rows + 1), cut(batch.prev_rewards, rows + 1);
    cut(batch.starts, rows + 1), cut(batch.actions, rows), cut(batch.rewards, rows), cut(batch.terminated, rows);
    cut(batch.mask, rows);
  }
  return batch;
}

OffPolicyUpdateStats OffPolicyTrainer::update(const ReplayBatch& cpu_batch, const torch::Generator& generator) {
  auto& agent = *agent_;
  const auto& op = config_.algo.off_policy;
  const double a = alpha();
  const auto to = [&](const torch::Tensor& x) { return x.to(device_); };
  const SequenceInputs in{to(cpu_batch.obs), agent.network_actions(to(cpu_batch.prev_actions)),
                          to(cpu_batch.prev_rewards).unsqueeze(-1), to(cpu_batch.starts)};
  const auto actions = to(cpu_batch.actions);
  const auto rewards = to(cpu_batch.rewards);
  const auto terminated = to(cpu_batch.terminated);
  const auto mask = to(cpu_batch.mask);
  const int64_t rows = mask.size(0);
  const auto now = Slice(0, rows);       // positions 0..T−1: predictions and actor loss
  const auto next = Slice(1, rows + 1);  // positions 1..T: targets
  const auto obs_now = in.obs.index({now});
  const auto obs_next = in.obs.index({next});
  const auto randn = [&](const torch::Tensor& like) {
    return torch::randn(like.sizes(), generator, torch::kFloat32).to(device_);
  };
  const std::function<torch::Tensor(const torch::Tensor&)> noise = randn;
  OffPolicyUpdateStats stats;
  stats.updates = 1;
  stats.alpha = a;

  // The actor over the whole window once: its positions 1..T give the target's next actions (detached), its
  // positions 0..T−1 the actor loss (the actor's parameters do not change before the actor step).
  const auto actor_out = agent.actor->forward(in, agent.actor->initial_state(in.obs.size(1), device_), nullptr);
  const UpdateInputs inputs{agent, in, actor_out, now, next, obs_now, obs_next, mask, a, noise};

  // ---- critic ----
  torch::Tensor target;
  {
    torch::NoGradGuard no_grad;
    const auto hidden_target = agent.critic_target->encode(in).y.index({next});
    const auto next_value = algorithm_->next_value(inputs, hidden_target);  // draws before the actor's noise
    target = td_target(rewards, terminated, op.gamma, next_value);
  }
  const auto hidden = agent.critic->encode(in).y.index({now});
  auto q = agent.critic->q(hidden, obs_now, agent.network_actions(actions));
  const auto [q1, q2] = algorithm_->taken_q(q, actions);
  const auto qf_loss = critic_loss(q1, target, mask) + critic_loss(q2, target, mask);
  stats.critic_loss = qf_loss.item<double>();
  if (!std::isfinite(stats.critic_loss)) diverged(fmt::format("the critic loss is {}", stats.critic_loss));
  critic_optimizer_->zero_grad();
  qf_loss.backward();
  if (op.grad_clip > 0) torch::nn::utils::clip_grad_norm_(agent.critic->parameters(), op.grad_clip);
  critic_optimizer_->step();
  stats.q_mean = masked_mean(q1.detach(), mask).item<double>();

  // ---- actor (with the updated critic, whose parameters get no gradient) ----
  ActorTerms actor;
  {
    for (auto& p : agent.critic->parameters()) p.set_requires_grad(false);
    struct Unfreeze {
      RecurrentCritic critic;
      ~Unfreeze() {
        for (auto& p : critic->parameters()) p.set_requires_grad(true);
      }
    } unfreeze{agent.critic};
    actor = algorithm_->actor_terms(inputs, agent.critic->encode(in).y.index({now}));
  }
  const auto& [actor_loss, mean_log_prob] = actor;
  stats.actor_loss = actor_loss.item<double>();
  if (!std::isfinite(stats.actor_loss)) diverged(fmt::format("the actor loss is {}", stats.actor_loss));
  actor_optimizer_->zero_grad();
  actor_loss.backward();
  if (op.grad_clip > 0) torch::nn::utils::clip_grad_norm_(agent.actor->parameters(), op.grad_clip);
  actor_optimizer_->step();

  // ---- targets, then α ----
  soft_update(*agent.critic_target, *agent.critic, op.tau);
  if (agent.actor_target) soft_update(*agent.actor_target, *agent.actor, op.tau);
  if (mean_log_prob.defined()) {
    stats.entropy = -mean_log_prob.item<double>();
    if (agent.log_alpha.requires_grad()) {
      const auto loss = alpha_loss(agent.log_alpha, mean_log_prob, target_entropy_);
      alpha_optimizer_->zero_grad();
      loss.backward();
      alpha_optimizer_->step();
      stats.alpha_loss = loss.item<double>();
    }
  }
  return stats;
}

// ---------------------------------------------------------------------------------------------------------------
int64_t OffPolicyTrainer::updates_due(int64_t new_steps, bool warmup_just_ended) const {
  const double ratio = config_.algo.off_policy.updates_per_step;
  if (warmup_just_ended) return static_cast<int64_t>(static_cast<double>(env_steps_) * ratio);
  return static_cast<int64_t>(std::ceil(ratio * static_cast<double>(new_steps)));
}

TrainSummary OffPolicyTrainer::train(const std::function<bool()>& stop_requested) {
  if (!metrics_) metrics_ = std::make_unique<MetricsLogger>(run_dir_, config_.logging.tensorboard);
  const auto& op = config_.algo.off_policy;
  const int64_t total = config_.algo.total_steps;
  ProgressLine progress(total, config_.logging.console, run_output(), config_.logging.progress_seconds);
  TrainSummary summary;
  const auto stopped = [&] { return stop_requested && stop_requested(); };
  const auto stop_here = [&] {
    if (saved_iteration_ != iteration_ || saved_updates_ != updates_) save();
    summary.interrupted = true;
  };

  while (tail_pending_ || pending_updates_ > 0 || env_steps_ < total) {
    if (!tail_pending_) {
      const auto start = std::chrono::steady_clock::now();
      if (pending_updates_ == 0) {
        // ---- collect: every env plays one episode ----
        const bool warmup = episodes_ < op.warmup_episodes;
        const auto counters = envs_->episode_counters();
        std::vector<EpisodeRecord> records;
        const auto generator = generator_for(stream({kTorchStream, static_cast<uint64_t>(iteration_)}));
        agent_->eval();  // acting as PPO does: the spiking cell's fixed threshold (spiking paper Eq. 8)
        seed_memory_streams(*agent_, stream({kMemoryStream, 0, static_cast<uint64_t>(iteration_)}),
                            config_.experiment.memory_draws_on_device);
        OffPolicyActingPolicy actor_policy(agent_, algorithm_, device_);
        UniformRandomPolicy random_policy(spec_);
        ActingPolicy& policy = warmup ? static_cast<ActingPolicy&>(random_policy) : actor_policy;
        progress.phase(
            [&] { return fmt::format("iter {}: {} episodes", iteration_ + 1, warmup ? "warm-up" : "acting"); });
        const bool complete = run_episodes(*envs_, policy, spec_, std::vector<int64_t>(envs_->num_envs(), 1), generator,
                                           [&](EpisodeRecord&& r) { records.push_back(std::move(r)); },
                                           {.record_transitions = true, .stop = stopped});
        agent_->train();
        if (!complete) {  // nothing of this iteration is kept: the state is the one it started from
          envs_->set_episode_counters(counters);
          stop_here();
          break;
        }
        int64_t new_steps = 0;
        EpisodeTally tally;
        for (const auto& r : records) {
          // goal_states is empty unless the env reports them (meta-RL): pomdp-baselines' per-step terminal flags.
          replay_->add_episode(
              r.obs, r.actions, r.rewards, r.terminated,
              op.goal_state_terminal ? std::span<const uint8_t>(r.goal_states) : std::span<const uint8_t>());
          new_steps += r.length;
          tally.add(r);
        }
        const auto new_episodes = static_cast<int64_t>(records.size());
        env_steps_ += new_steps;
        episodes_ += new_episodes;
        iteration_return_ = tally.mean_return();
        iteration_length_ = static_cast<double>(new_steps) / static_cast<double>(new_episodes);
        iteration_success_ = tally.success_rate();
        iteration_stats_ = {};
        const bool warmup_done = episodes_ >= op.warmup_episodes;
        pending_updates_ = !warmup_done ? 0 : updates_due(new_steps, /*warmup_just_ended=*/warmup);
      }
      const auto collect_end = std::chrono::steady_clock::now();

      // ---- updates ----
      while (pending_updates_ > 0) {
        if (stopped()) break;
        progress.phase([&] { return fmt::format("iter {}: {} updates to go", iteration_ + 1, pending_updates_); });
        const ReplayBatch batch = sample_batch(updates_);
        const auto generator = generator_for(stream({kUpdateStream, static_cast<uint64_t>(updates_)}));
        seed_memory_streams(*agent_, stream({kMemoryStream, 1, static_cast<uint64_t>(updates_)}),
                            config_.experiment.memory_draws_on_device);
        iteration_stats_.add(update(batch, generator));
        ++updates_;
        --pending_updates_;
      }
      if (pending_updates_ > 0) {  // stopped between two updates: the checkpoint keeps the updates still due
        stop_here();
        break;
      }
      ++iteration_;
      const auto end = std::chrono::steady_clock::now();
      tail_seconds_ = std::chrono::duration<double>(end - start).count();
      tail_collect_seconds_ = std::chrono::duration<double>(collect_end - start).count();
      elapsed_seconds_ += tail_seconds_;
      summary.rollout_seconds += tail_collect_seconds_;
      summary.update_seconds += tail_seconds_ - tail_collect_seconds_;
      tail_pending_ = true;
    }

    // ---- the iteration's tail: evaluation, metrics row, checkpoint ----
    OffPolicyUpdateStats stats = iteration_stats_;
    stats.finish();
    const double mean_return = iteration_return_, mean_length = iteration_length_;
    const double seconds = tail_seconds_, collect_seconds = tail_collect_seconds_;
    TaskSplitEvaluator::Results eval;
    // Every eval_interval episodes, and once more at the end, so that every run (a short --budget one too) ends
    // with its final policy's score. A stop during it (evaluations can be long) keeps tail_pending_ in the
    // checkpoint, and the resumed run plays the same evaluation.
    if (op.eval_interval > 0 && (episodes_ >= next_eval_episodes_ || env_steps_ >= total)) {
      progress.phase([&] { return fmt::format("iter {}: evaluating", iteration_); });
      const auto results = evaluator_->run(agent_, algorithm_, spec_, device_, episodes_, stopped);
      if (!results) {
        stop_here();
        break;
      }
      eval = *results;
      while (next_eval_episodes_ <= episodes_) next_eval_episodes_ += op.eval_interval;
    }
    tail_pending_ = false;
    const double eval_mean = eval.held_out.return_mean;
    if (iteration_ % config_.logging.every == 0 || env_steps_ >= total || std::isfinite(eval_mean)) {
      std::vector<std::pair<std::string, double>> scalars = {
          {"charts/episode_return_mean", mean_return},
          {"charts/episode_length_mean", mean_length},
          {"charts/episodes", static_cast<double>(episodes_)},
          {"charts/iteration", static_cast<double>(iteration_)},
          {"charts/updates", static_cast<double>(updates_)},
          {"charts/replay_transitions", static_cast<double>(replay_->num_transitions())},
          {"charts/steps_per_second", static_cast<double>(env_steps_) / std::max(1e-9, elapsed_seconds_)},
          {"charts/iteration_seconds", seconds},
          {"charts/update_seconds", seconds - collect_seconds},
          {"eval/episode_return_mean", eval_mean},
          {"eval/episode_return_std", eval.held_out.return_std},
          {"eval/episodes", eval.held_out.episodes},
          {"losses/critic_loss", stats.critic_loss},
          {"losses/actor_loss", stats.actor_loss},
          {"losses/alpha", stats.updates > 0 ? stats.alpha : alpha()},
          {"losses/alpha_loss", stats.alpha_loss},
          {"losses/entropy", stats.entropy},
          {"losses/q_mean", stats.q_mean},
          {"losses/updates", static_cast<double>(stats.updates)}};
      if (envs_->reports_success()) scalars.emplace_back("charts/success_rate", iteration_success_);
      evaluator_->append_scalars(eval, envs_->reports_success(), scalars);
      metrics_->log(env_steps_, scalars);
    }
    {
      progress.update(env_steps_, static_cast<double>(env_steps_) / std::max(1e-9, elapsed_seconds_),
                      std::isfinite(eval_mean) ? eval_mean : mean_return, episodes_);
      summary.last_return_mean = mean_return;
    }
    const bool done = env_steps_ >= total;
    summary.interrupted = !done && stopped();
    if (done || summary.interrupted || iteration_ % config_.checkpoint.every == 0) save();
    if (summary.interrupted) break;
  }
  progress.finish();
  summary.iterations = iteration_;
  summary.env_steps = env_steps_;
  return summary;
}

}  // namespace rlm::agents
