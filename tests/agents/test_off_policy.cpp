// The off-policy trainers end to end on CPU: padding never changes an update, a stopped and resumed run (replay
// buffer in the checkpoint) is bitwise the uninterrupted one, every memory backend trains under SAC-D, SAC and TD3
// run on Box actions, wrong action spaces are config errors, and meta envs are evaluated on every held-out task once
// with goal states stored as replay terminals.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "agents/experiment_config.hpp"
#include "agents/off_policy.hpp"
#include "core/error.hpp"
#include "memory/registry.hpp"
#include "run_dir_util.hpp"

namespace fs = std::filesystem;
using rlm::agents::OffPolicyTrainer;
using rlm::agents::ReplayBatch;
using rlm::test::fresh_dir;
using rlm::test::metrics_without_timing;

namespace {

rlm::Config tiny_config(const std::string& type, const std::string& env_id, int64_t total_steps) {
  rlm::Config c;
  c.experiment.seed = 5;
  c.experiment.device = "cpu";
  c.experiment.torch_threads = 1;
  c.env.id = env_id;
  c.env.num_envs = 2;
  c.env.previous_action = false;
  c.env.antialias = false;
  c.model.memory.hidden_size = 16;
  c.model.off_policy.actor_layers = {16};
  c.model.off_policy.critic_layers = {16};
  c.model.off_policy.observation_embedding_size = 8;
  c.model.off_policy.action_embedding_size = 4;
  c.model.off_policy.reward_embedding_size = 4;
  c.algo.type = type;
  c.algo.total_steps = total_steps;
  c.algo.off_policy.batch_size = 4;
  c.algo.off_policy.warmup_episodes = 2;
  c.algo.off_policy.updates_per_step = 0.05;
  c.algo.off_policy.eval_interval = 4;
  c.algo.off_policy.eval_episodes = 2;
  c.logging.tensorboard = false;
  c.logging.console = false;
  c.checkpoint.every = 1;
  c.checkpoint.replay_buffer = true;
  return c;
}

std::vector<torch::Tensor> parameters_of(OffPolicyTrainer& trainer) {
  std::vector<torch::Tensor> out;
  for (const auto& p : trainer.agent()->parameters()) out.push_back(p.detach().clone());
  return out;
}

void check_same(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("parameter " << i);
    if (tol == 0)
      CHECK(torch::equal(a[i], b[i]));
    else
      CHECK(torch::allclose(a[i], b[i], 0.0, tol));
  }
}

}  // namespace

TEST_CASE("off-policy: padding after the real steps changes no update", "[agents][off_policy]") {
  const auto config = tiny_config("sacd", "popgym/RepeatPreviousEasy", 1000);
  OffPolicyTrainer plain(config, fresh_dir("op-plain"));
  OffPolicyTrainer padded(config, fresh_dir("op-padded"));
  // Two identical buffers of short random episodes.
  torch::manual_seed(1);
  const int64_t obs_size = static_cast<int64_t>(plain.replay().num_transitions());  // 0: buffers start empty
  REQUIRE(obs_size == 0);
  for (int e = 0; e < 6; ++e) {
    const int64_t length = 3 + 2 * e;
    const auto obs = torch::rand({(length + 1) * 4});  // RepeatPreviousEasy: 4 observation floats
    const auto actions = torch::randint(4, {length}).to(torch::kFloat32);
    const auto rewards = torch::randn({length});
    for (auto* t : {&plain, &padded}) {
      t->replay().add_episode({obs.data_ptr<float>(), static_cast<size_t>(obs.numel())},
                              {actions.data_ptr<float>(), static_cast<size_t>(length)},
                              {rewards.data_ptr<float>(), static_cast<size_t>(length)}, e % 2 == 0);
    }
  }
  for (int64_t u = 0; u < 3; ++u) {
    const auto batch = plain.sample_batch(u);
    auto longer = batch;
    const int64_t pad = 5;
    const int64_t b = batch.mask.size(1);
    const auto more = [&](const torch::Tensor& x, const torch::Tensor& fill) { return torch::cat({x, fill}, 0); };
    longer.obs = more(batch.obs, torch::rand({pad, b, batch.obs.size(2)}) * 7);
    longer.prev_actions = more(batch.prev_actions, torch::randint(4, {pad, b, 1}).to(torch::kFloat32));
    longer.prev_rewards = more(batch.prev_rewards, torch::randn({pad, b}) * 3);
    longer.starts = more(batch.starts, torch::rand({pad, b}) > 0.5);
    longer.actions = more(batch.actions, torch::randint(4, {pad, b, 1}).to(torch::kFloat32));
    longer.rewards = more(batch.rewards, torch::randn({pad, b}) * 3);
    longer.terminated = more(batch.terminated, (torch::rand({pad, b}) > 0.5).to(torch::kFloat32));
    longer.mask = more(batch.mask, torch::zeros({pad, b}));
    const auto a = plain.update(batch, at::detail::createCPUGenerator(u));
    const auto c = padded.update(longer, at::detail::createCPUGenerator(u));
    CHECK(a.critic_loss == Approx(c.critic_loss).epsilon(1e-5));
    CHECK(a.actor_loss == Approx(c.actor_loss).epsilon(1e-5));
  }
  check_same(parameters_of(plain), parameters_of(padded), 1e-5);
}

TEST_CASE("off-policy: a resumed run with its replay buffer is bitwise the uninterrupted one",
          "[agents][off_policy][slow]") {
  // Wind has a task split: its runs also evaluate on the training tasks, with eval envs of their own to restore.
  struct Case {
    std::string type, env;
    int64_t episode;
  };
  for (const auto& [type, env, episode] :
       {Case{"sacd", "popgym/RepeatFirstEasy", 51}, Case{"sac", "popgym/PositionOnlyPendulumEasy", 200},
        Case{"sac", "meta/Wind", 100}}) {
    INFO(type << " on " << env);
    const auto config = tiny_config(type, env, 4 * 2 * episode);  // four iterations of two episodes
    const std::string name = type + "-" + std::to_string(episode);
    const auto straight_dir = fresh_dir("op-straight-" + name);
    const auto resumed_dir = fresh_dir("op-resumed-" + name);
    OffPolicyTrainer straight(config, straight_dir);
    const auto a = straight.train();
    REQUIRE(a.iterations == 4);
    REQUIRE(straight.updates() > 10);

    // Stop twice: once inside the first iteration's updates (the stop is checked at each of the episode's steps
    // and before each update), once inside the next collection; resume each time.
    for (int64_t stop_after : {episode + 3, episode / 2}) {
      OffPolicyTrainer part(config, resumed_dir);
      if (fs::exists(resumed_dir / "checkpoints")) part.resume();
      int64_t calls = 0;
      const auto s = part.train([&] { return ++calls > stop_after; });
      CHECK(s.interrupted);
    }
    OffPolicyTrainer last(config, resumed_dir);
    last.resume();
    const auto b = last.train();
    CHECK_FALSE(b.interrupted);
    CHECK(b.env_steps == a.env_steps);
    CHECK(last.updates() == straight.updates());
    check_same(parameters_of(straight), parameters_of(last), 0);
    CHECK(metrics_without_timing(straight_dir) == metrics_without_timing(resumed_dir));
    bool has_train_tasks_eval = false;
    for (const auto& row : metrics_without_timing(straight_dir))
      has_train_tasks_eval = has_train_tasks_eval || row.contains("eval/train_tasks_success_rate");
    CHECK(has_train_tasks_eval == (env == "meta/Wind"));
  }
}

TEST_CASE("off-policy: every memory backend trains under SAC-D, and TD3 runs", "[agents][off_policy][slow]") {
  for (const std::string backend : {"ffm", "shm", "kf", "spiking", "stm"}) {
    INFO(backend);
    auto config = tiny_config("sacd", "popgym/RepeatPreviousEasy", 4 * 51 * 2);
    config.model.memory.type = backend;
    config.model.memory.ffm.memory_size = 8;
    config.model.memory.ffm.context_size = 2;
    config.model.memory.shm.output_size = 16;
    config.model.memory.kf.state_size = 16;
    config.model.memory.stm.item_size = 8;
    config.model.memory.stm.num_slots = 2;
    config.model.memory.stm.rel_size = 8;
    config.algo.off_policy.updates_per_step = 0.5;
    config.checkpoint.replay_buffer = false;
    OffPolicyTrainer trainer(config, fresh_dir("op-backend-" + backend));
    const auto before = parameters_of(trainer);
    const auto summary = trainer.train();
    CHECK(summary.env_steps >= 408);
    CHECK(trainer.updates() >= 200);
    // It learned something: the critic moved.
    CHECK_FALSE(torch::equal(before[before.size() / 2], parameters_of(trainer)[before.size() / 2]));
  }
  auto td3 = tiny_config("td3", "popgym/PositionOnlyPendulumEasy", 2 * 2 * 200);
  td3.model.off_policy.actor_memory.type = "gru";  // the actor's own memory section, as the SHM fork runs a GRU actor
  td3.model.off_policy.actor_memory.hidden_size = 8;
  td3.model.memory.type = "ffm";
  td3.model.memory.ffm.memory_size = 8;
  td3.model.memory.ffm.context_size = 2;
  OffPolicyTrainer trainer(td3, fresh_dir("op-td3"));
  CHECK(trainer.train().env_steps == 800);
  CHECK(trainer.updates() > 0);
}

TEST_CASE("off-policy: the action space must suit the trainer", "[agents][off_policy]") {
  const auto message = [](const rlm::Config& c) {
    try {
      OffPolicyTrainer t(c, fresh_dir("op-bad"));
    } catch (const rlm::ConfigValueError& e) {
      return e.key + ": " + e.what();
    }
    return std::string("no error");
  };
  CHECK_THAT(message(tiny_config("sacd", "popgym/PositionOnlyPendulumEasy", 100)),
             Catch::Contains("algo.type: algo.type = sacd needs a Discrete action space") &&
                 Catch::Contains("use sac or td3"));
  CHECK_THAT(message(tiny_config("sac", "popgym/RepeatFirstEasy", 100)),
             Catch::Contains("algo.type = sac needs a Box action space"));
  CHECK_THAT(message(tiny_config("sacd", "popgym/BattleshipEasy", 100)),
             Catch::Contains("MultiDiscrete") && Catch::Contains("env.discrete_action: true"));
}

TEST_CASE("the memories' random draws come from the run's streams, not torch's global generator",
          "[agents][off_policy]") {
  for (const std::string type : {"shm", "spiking"}) {
    INFO(type);
    rlm::MemoryConfig config;
    config.type = type;
    config.hidden_size = 8;
    config.shm.output_size = 8;
    config.spiking.noise_high = 1.0;
    torch::manual_seed(0);
    auto memory = rlm::memory::make_memory(config, 4);
    memory->train();  // the spiking cell draws its threshold only in training
    const auto x = torch::randn({6, 3, 4});
    const auto starts = torch::zeros({6, 3}, torch::kBool);
    const auto run = [&](uint64_t stream, uint64_t global) {
      rlm::agents::seed_memory_streams(*memory, stream);
      torch::manual_seed(global);
      return memory->forward(x, memory->initial_state(3, torch::kCPU), starts).y;
    };
    const auto a = run(1, 10);
    CHECK(torch::equal(a, run(1, 20)));        // the global generator plays no part
    CHECK_FALSE(torch::equal(a, run(2, 10)));  // the stream's seed does
  }
}

TEST_CASE("off-policy: α starts where the config says and only a tuned α learns", "[agents][off_policy]") {
  auto tuned = tiny_config("sacd", "popgym/RepeatPreviousEasy", 100);
  OffPolicyTrainer pomdp_baselines(tuned, fresh_dir("op-alpha-1"));
  CHECK(pomdp_baselines.agent()->log_alpha.item<double>() == 0.0);  // α = 1
  CHECK(pomdp_baselines.agent()->log_alpha.requires_grad());
  tuned.algo.sacd.initial_alpha = 0.1;  // Memory-RL's init_temperature
  OffPolicyTrainer memory_rl(tuned, fresh_dir("op-alpha-2"));
  CHECK(memory_rl.agent()->log_alpha.item<double>() == Approx(std::log(0.1)));
  auto fixed = tiny_config("sac", "popgym/PositionOnlyPendulumEasy", 100);
  fixed.algo.sac.automatic_entropy_tuning = false;
  fixed.algo.sac.entropy_alpha = 0.2;
  OffPolicyTrainer constant(fixed, fresh_dir("op-alpha-3"));
  CHECK(constant.agent()->log_alpha.item<double>() == Approx(std::log(0.2)));
  CHECK_FALSE(constant.agent()->log_alpha.requires_grad());
}

TEST_CASE("off-policy: a run shorter than eval_interval still ends with an evaluation", "[agents][off_policy]") {
  // 4 iterations of 2 episodes: the interval (1000 episodes) is never reached, as in a reproduction at a small
  // --budget, but the final policy is scored once, on the last row.
  auto config = tiny_config("sacd", "popgym/RepeatPreviousEasy", 4 * 2 * 51);
  config.algo.off_policy.eval_interval = 1000;
  const auto dir = fresh_dir("op-final-eval");
  OffPolicyTrainer(config, dir).train();
  const auto rows = metrics_without_timing(dir);
  REQUIRE_FALSE(rows.empty());
  int evaluations = 0;
  const auto evaluated = [](const nlohmann::json& row) {
    return row.contains("eval/episode_return_mean") && !row["eval/episode_return_mean"].is_null();
  };
  for (const auto& row : rows) evaluations += evaluated(row) ? 1 : 0;
  CHECK(evaluations == 1);
  CHECK(evaluated(rows.back()));
}

TEST_CASE("off-policy: meta envs evaluate every held-out task once and store goal states as terminal",
          "[agents][off_policy][slow]") {
  // Point Robot's original variant: 80 training and 20 held-out tasks, two inner episodes of 60 steps.
  auto config = tiny_config("sac", "meta/PointRobot", 4 * 2 * 120);  // four iterations of two episodes
  config.env.options.variant = "original";
  config.algo.off_policy.eval_interval = 2;  // after the 2 warm-up episodes and every iteration
  config.algo.off_policy.eval_episodes = 3;
  const auto last_eval = [](const fs::path& dir) {
    nlohmann::json found;
    for (const auto& row : metrics_without_timing(dir))
      if (row.contains("eval/episodes") && !row["eval/episodes"].is_null()) found = row;
    return found;
  };
  SECTION("each task once: pomdp-baselines' evaluate()") {
    const auto dir = fresh_dir("op-meta-each-task");
    OffPolicyTrainer trainer(config, dir);
    trainer.train();
    const auto row = last_eval(dir);
    REQUIRE_FALSE(row.is_null());
    CHECK(row["eval/episodes"] == 20.0);
    CHECK(row["eval/tasks"] == 20.0);        // every held-out task, none twice
    CHECK(row["eval/train_tasks"] == 20.0);  // train_tasks[:n_eval]

    // The replay's terminal flags are the goal states: on Point Robot, whether the step's reward was earned, except
    // after step H, where the check reads the second inner episode's start state (the reference's quirk).
    const ReplayBatch batch = trainer.sample_batch(0);
    REQUIRE(batch.seq_len == 120);  // whole episodes: two inner episodes of H = 60
    const auto rewarded = batch.rewards * batch.mask;
    REQUIRE(rewarded.sum().item<float>() > 0);  // the random warm-up found some goal
    const auto terminal = batch.terminated * batch.mask;
    using torch::indexing::None;
    using torch::indexing::Slice;
    CHECK(torch::equal(terminal.index({Slice(0, 59)}), rewarded.index({Slice(0, 59)})));
    CHECK(torch::equal(terminal.index({Slice(60, None)}), rewarded.index({Slice(60, None)})));
  }
  SECTION("options: eval_episodes on drawn tasks, terminal only at a real end") {
    config.algo.off_policy.eval_each_task = false;
    config.algo.off_policy.goal_state_terminal = false;
    const auto dir = fresh_dir("op-meta-drawn-tasks");
    OffPolicyTrainer trainer(config, dir);
    trainer.train();
    const auto row = last_eval(dir);
    REQUIRE_FALSE(row.is_null());
    CHECK(row["eval/episodes"] == 3.0);
    CHECK(row["eval/tasks"].get<double>() <= 3.0);
    CHECK(trainer.sample_batch(0).terminated.sum().item<float>() == 0);
  }
}
