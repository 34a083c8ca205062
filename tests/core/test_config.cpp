// Config: paper defaults, YAML round trip, overrides, and the exact one-line message of every kind of error.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "agents/experiment_config.hpp"
#include "core/config_suggest.hpp"
#include "core/config_test_util.hpp"
#include "core/error.hpp"

namespace {

using rlm::config_test::error_of;
using rlm::config_test::parse;

std::filesystem::path data_dir() {
  const char* root = std::getenv("RLM_SOURCE_DIR");
  return std::filesystem::path(root ? root : ".") / "tests" / "data" / "config";
}

}  // namespace

TEST_CASE("defaults are the POPGym paper's PPO values", "[config]") {
  const rlm::Config c;
  CHECK(c.experiment.name == "experiment");
  CHECK(c.experiment.seed == 0);
  CHECK(c.experiment.device == "auto");
  CHECK(c.experiment.torch_threads == 0);
  CHECK(c.experiment.runs_dir == "runs");
  CHECK(c.env.id == "popgym/RepeatFirstEasy");
  CHECK(c.env.num_envs == 64);
  CHECK(c.env.num_threads == 1);
  CHECK(c.env.previous_action);
  CHECK(c.env.antialias);
  CHECK(c.model.ppo.feature_size == 128);
  CHECK(c.model.ppo.preprocessor_size == 128);
  CHECK(c.model.ppo.head_sizes == std::vector<int>{128, 128});
  CHECK(c.model.memory.type == "gru");
  CHECK(c.model.memory.hidden_size == 256);
  CHECK(c.algo.type == "ppo");
  CHECK(c.algo.total_steps == 15000000);
  CHECK(c.algo.ppo.steps_per_env == 1024);
  CHECK(c.algo.ppo.batch_mode == "complete_episodes");
  CHECK(c.algo.ppo.max_seq_len == 1024);
  CHECK(c.algo.ppo.minibatch_size == 8192);
  CHECK(c.algo.ppo.epochs == 30);
  CHECK(c.algo.ppo.lr == 5e-5);
  CHECK(c.algo.ppo.adam_eps == 1e-8);
  CHECK(c.algo.ppo.gamma == 0.99);
  CHECK(c.algo.ppo.gae_lambda == 1.0);
  CHECK(c.algo.ppo.clip_param == 0.3);
  CHECK(c.algo.ppo.vf_clip_param == 10.0);
  CHECK(c.algo.ppo.vf_loss_coeff == 1.0);
  CHECK(c.algo.ppo.entropy_coeff == 0.0);
  CHECK(c.algo.ppo.kl_coeff == 0.2);
  CHECK(c.algo.ppo.kl_target == 0.01);
  CHECK(c.algo.ppo.grad_clip == 0.0);
  CHECK(c.algo.ppo.normalize_advantages);
  CHECK(c.logging.every == 1);
  CHECK(c.logging.tensorboard);
  CHECK(c.logging.console);
  CHECK(c.checkpoint.every == 10);
  CHECK(c.checkpoint.keep_last == 3);
  CHECK(c.eval.episodes == 100);
  CHECK_FALSE(c.eval.deterministic);
  CHECK_NOTHROW(rlm::validate(c));
}

TEST_CASE("an empty file, comments only or an empty section give the defaults", "[config]") {
  CHECK(parse("") == rlm::Config{});
  CHECK(parse("# nothing here\n") == rlm::Config{});
  CHECK(parse("algo:\nmodel:\n  memory:\n") == rlm::Config{});
}

TEST_CASE("keys that are present are read, missing keys keep their defaults", "[config]") {
  const rlm::Config c = parse(
      "experiment: {name: run1, seed: 7, device: cpu}\n"
      "env:\n  previous_action: false\n"
      "model:\n  ppo:\n    head_sizes: [64, 32, 16]\n  memory:\n    type: gru\n    hidden_size: 32\n"
      "algo:\n  total_steps: 1.5e7\n  ppo:\n    lr: 1e-4\n    gamma: 1\n    batch_mode: complete_episodes\n");
  CHECK(c.experiment.name == "run1");
  CHECK(c.experiment.seed == 7);
  CHECK(c.experiment.device == "cpu");
  CHECK_FALSE(c.env.previous_action);
  CHECK(c.model.ppo.head_sizes == std::vector<int>{64, 32, 16});
  CHECK(c.model.memory.type == "gru");
  CHECK(c.model.memory.hidden_size == 32);
  CHECK(c.algo.total_steps == 15000000);
  CHECK(c.algo.ppo.lr == 1e-4);
  CHECK(c.algo.ppo.gamma == 1.0);
  CHECK(c.algo.ppo.batch_mode == "complete_episodes");
  // Untouched keys, in touched and untouched sections.
  CHECK(c.experiment.runs_dir == "runs");
  CHECK(c.model.ppo.feature_size == 128);
  CHECK(c.algo.ppo.epochs == 30);
  CHECK(c.eval == rlm::EvalConfig{});
  // An empty list is a list (heads without hidden layers).
  CHECK(parse("model:\n  ppo:\n    head_sizes: []\n").model.ppo.head_sizes.empty());
}

TEST_CASE("to_yaml writes every key and parses back to an equal Config", "[config]") {
  CHECK(parse(rlm::to_yaml(rlm::Config{})) == rlm::Config{});

  rlm::Config c;
  c.experiment.name = "a name: with \"quotes\" and # hash";
  c.experiment.seed = 123456789012345;
  c.experiment.device = "cuda";
  c.experiment.runs_dir = "null";  // a string that YAML would otherwise read as nothing
  c.env.id = "popgym/CountRecallHard";
  c.env.num_envs = 8;
  c.env.num_threads = 2;
  c.env.antialias = false;
  c.model.ppo.head_sizes = {7};
  c.model.memory.hidden_size = 17;
  c.algo.total_steps = 1;
  c.algo.ppo.steps_per_env = 100;
  c.algo.ppo.minibatch_size = 800;
  c.algo.ppo.lr = 0.1 + 0.2;  // not exactly representable in short decimal form
  c.algo.ppo.adam_eps = 1e-300;
  c.algo.ppo.gamma = 1.0 / 3.0;
  c.algo.ppo.grad_clip = -1.0;
  c.algo.ppo.normalize_advantages = false;
  c.logging.console = false;
  c.checkpoint.keep_last = 9;
  c.eval.deterministic = true;
  // Enum fields (a backend's own enums in its config section) are written by name.
  c.model.memory.kf.variant = rlm::memory::KfVariant::kf_u;
  c.model.memory.ffm.init = rlm::memory::FfmInit::kPeriods;
  c.model.memory.stm.qkv_norm = rlm::StmConfig::QkvNorm::kVector;

  const std::string text = rlm::to_yaml(c);
  INFO(text);
  CHECK(parse(text) == c);
  for (const std::string& key : rlm::config_keys()) {
    const size_t dot = key.rfind('.');
    const std::string leaf = dot == std::string::npos ? key : key.substr(dot + 1);
    CHECK(text.find(leaf + ":") != std::string::npos);
  }
}

TEST_CASE("config_keys lists sections and fields by path", "[config]") {
  const std::vector<std::string> keys = rlm::config_keys();
  for (const char* k : {"experiment", "algo.ppo.lr", "model.memory", "model.memory.type", "eval.deterministic"}) {
    CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
  }
}

TEST_CASE("suggest_key finds typos, abbreviations and keys in the wrong section", "[config]") {
  using rlm::config_detail::edit_distance;
  using rlm::config_detail::suggest_key;
  CHECK(edit_distance("gamma", "gamma") == 0);
  CHECK(edit_distance("gama", "gamma") == 1);
  CHECK(edit_distance("lr", "rl") == 1);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string> keys = rlm::config_keys();
  CHECK(suggest_key("algo.epoch", keys) == "algo.ppo.epochs");
  CHECK(suggest_key("algo.learning_rate", keys) == "algo.ppo.lr");
  CHECK(suggest_key("env.numenvs", keys) == "env.num_envs");
  CHECK(suggest_key("exp.seed", keys) == "experiment.seed");
  CHECK(suggest_key("lr", keys) == "algo.ppo.lr");
  CHECK(suggest_key("model.memory.hiden_size", keys) == "model.memory.hidden_size");
  CHECK(suggest_key("model.hidden_size", keys) == "model.memory.hidden_size");
  CHECK(suggest_key("algo.qqq", keys) == std::nullopt);
  CHECK(suggest_key("", keys) == std::nullopt);
}

TEST_CASE("a key that moved is refused with its new place, from a file or the command line", "[config]") {
  // PPO's options moved from algo to algo.ppo, its network from model to model.ppo, the off-policy per-network
  // memories from model to model.off_policy: an old config (or an old run folder's config.yaml) is never read
  // with another meaning.
  CHECK(error_of("algo:\n  total_steps: 10\n  lr: 1e-4\n") == "x.yaml:3: algo.lr is now algo.ppo.lr");
  CHECK(error_of("model:\n  head_sizes: [64]\n") == "x.yaml:2: model.head_sizes is now model.ppo.head_sizes");
  CHECK(error_of("algo:\n  type: sac\nmodel:\n  actor_memory:\n    type: gru\n") ==
        "x.yaml:4: model.actor_memory is now model.off_policy.actor_memory");
  CHECK(error_of("", {"algo.gamma=0.9"}) == "command line: algo.gamma=0.9: algo.gamma is now algo.ppo.gamma");
  CHECK(error_of("", {"model.critic_memory.type=shm"}) ==
        "command line: model.critic_memory.type=shm: model.critic_memory.type is now "
        "model.off_policy.critic_memory.type");
  // Every moved key's new place is a key, and no old place is one.
  const auto keys = rlm::config_keys();
  const auto known = [&](const std::string& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  for (const std::string old : {"algo.lr", "algo.steps_per_env", "algo.normalize_advantages", "model.feature_size",
                                "model.embedding_max_len", "model.actor_memory"}) {
    CHECK_FALSE(known(old));
    const std::string message = error_of("", {old + "=1"});
    const std::string now = message.substr(message.rfind(" is now ") + 8);
    INFO(message);
    CHECK(known(now));
  }
}

TEST_CASE("unknown keys and sections name file, line and path, with a hint when one is close", "[config]") {
  CHECK(error_of("algo:\n  ppo:\n    lr: 1e-4\n  lerning_rate: 1e-4\n") ==
        "x.yaml:4: unknown key 'algo.lerning_rate' (did you mean 'algo.ppo.lr'?)");
  CHECK(error_of("algo:\n  gama: 0.9\n") == "x.yaml:2: unknown key 'algo.gama' (did you mean 'algo.ppo.gamma'?)");
  CHECK(error_of("model:\n  memory:\n    typ: gru\n") ==
        "x.yaml:3: unknown key 'model.memory.typ' (did you mean 'model.memory.type'?)");
  CHECK(error_of("algo:\n  seed: 1\n") == "x.yaml:2: unknown key 'algo.seed' (did you mean 'experiment.seed'?)");
  CHECK(error_of("algo:\n  zzzzzz: 1\n") == "x.yaml:2: unknown key 'algo.zzzzzz'");
  CHECK(error_of("env: {}\nalgorithm:\n  lr: 1\n") == "x.yaml:2: unknown section 'algorithm' (did you mean 'algo'?)");
  CHECK(error_of("experimnet:\n  seed: 1\n") == "x.yaml:1: unknown section 'experimnet' (did you mean 'experiment'?)");
  CHECK(error_of("memory:\n  type: gru\n") == "x.yaml:1: unknown section 'memory' (did you mean 'model.memory'?)");
  CHECK(error_of("foo: 1\n") == "x.yaml:1: unknown section 'foo'");
  CHECK(error_of("algo:\n  ppo:\n    lr: 1e-4\n    epochs: 3\n    lr: 1e-3\n") ==
        "x.yaml:5: duplicate key 'algo.ppo.lr' (first set on line 3)");
}

TEST_CASE("wrong types name the expected type and the value given", "[config]") {
  CHECK(error_of("algo:\n  ppo:\n    lr: fast\n") == "x.yaml:3: algo.ppo.lr: expected a number, got 'fast'");
  CHECK(error_of("algo:\n  ppo:\n    lr: {a: 1}\n") == "x.yaml:3: algo.ppo.lr: expected a number, got a map");
  CHECK(error_of("algo:\n  ppo:\n    lr:\n") == "x.yaml:3: algo.ppo.lr: expected a number, got nothing");
  CHECK(error_of("algo:\n  ppo:\n    lr: nan\n") == "x.yaml:3: algo.ppo.lr: expected a number, got 'nan'");
  CHECK(error_of("env:\n  num_envs: 1.5\n") == "x.yaml:2: env.num_envs: expected an integer, got '1.5'");
  CHECK(error_of("env:\n  num_envs: 0x10\n") == "x.yaml:2: env.num_envs: expected an integer, got '0x10'");
  CHECK(error_of("algo:\n  total_steps: 1e19\n") == "x.yaml:2: algo.total_steps: expected an integer, got '1e19'");
  CHECK(error_of("env:\n  antialias: maybe\n") == "x.yaml:2: env.antialias: expected true or false, got 'maybe'");
  CHECK(error_of("env:\n  antialias: 1\n") == "x.yaml:2: env.antialias: expected true or false, got '1'");
  CHECK(error_of("experiment:\n  name: [a, b]\n") == "x.yaml:2: experiment.name: expected a string, got a list");
  CHECK(error_of("model:\n  ppo:\n    head_sizes: 128\n") ==
        "x.yaml:3: model.ppo.head_sizes: expected a list of integers, like [64, 64], got '128'");
  CHECK(error_of("model:\n  ppo:\n    head_sizes:\n      - 64\n      - wide\n") ==
        "x.yaml:5: model.ppo.head_sizes[1]: expected an integer, got 'wide'");
  CHECK(error_of("algo: 5\n") == "x.yaml:1: algo: expected a map of keys, got '5'");
  CHECK(error_of("model:\n  memory: gru\n") == "x.yaml:2: model.memory: expected a map of keys, got 'gru'");
  CHECK(error_of("- a\n- b\n") == "x.yaml:1: expected a map of sections, got a list");
}

TEST_CASE("integers accept integral floating-point notation", "[config]") {
  CHECK(parse("algo:\n  total_steps: 15000000\n").algo.total_steps == 15000000);
  CHECK(parse("algo:\n  total_steps: 1.5e7\n").algo.total_steps == 15000000);
  CHECK(parse("algo:\n  total_steps: 2e9\n").algo.total_steps == 2000000000);
  CHECK(parse("algo:\n  ppo:\n    epochs: +4\n").algo.ppo.epochs == 4);
  CHECK(error_of("algo:\n  ppo:\n    epochs: +-4\n") == "x.yaml:3: algo.ppo.epochs: expected an integer, got '+-4'");
  CHECK(parse("algo:\n  ppo:\n    epochs: 4.0\n").algo.ppo.epochs == 4);
}

TEST_CASE("values out of range or not among the choices are errors", "[config]") {
  CHECK(error_of("algo:\n  ppo:\n    gamma: 1.5\n") == "x.yaml:3: algo.ppo.gamma = 1.5 is out of range [0, 1]");
  CHECK(error_of("algo:\n  ppo:\n    gae_lambda: -0.1\n") ==
        "x.yaml:3: algo.ppo.gae_lambda = -0.1 is out of range [0, 1]");
  CHECK(error_of("algo:\n  ppo:\n    lr: 0\n") == "x.yaml:3: algo.ppo.lr = 0 is out of range (0, inf)");
  CHECK(error_of("env:\n  num_envs: 0\n") == "x.yaml:2: env.num_envs = 0 is out of range [1, 65536]");
  // An int field without an upper bound reports the largest int rather than overflowing.
  CHECK(error_of("algo:\n  ppo:\n    steps_per_env: 3e9\n") ==
        "x.yaml:3: algo.ppo.steps_per_env = 3000000000 is out of range [1, 2147483647]");
  CHECK(error_of("algo:\n  ppo:\n    minibatch_size: 0\n") ==
        "x.yaml:3: algo.ppo.minibatch_size = 0 is out of range [1, 2147483647]");
  CHECK(error_of("experiment:\n  seed: -1\n") == "x.yaml:2: experiment.seed = -1 is out of range [0, inf)");
  CHECK(error_of("model:\n  ppo:\n    head_sizes: [64, 0]\n") ==
        "x.yaml:3: model.ppo.head_sizes[1] = 0 is out of range [1, 32768]");
  CHECK(error_of("experiment:\n  device: gpu\n") ==
        "x.yaml:2: experiment.device = 'gpu' is not one of auto, cpu, cuda");
  CHECK(error_of("algo:\n  ppo:\n    batch_mode: full\n") ==
        "x.yaml:3: algo.ppo.batch_mode = 'full' is not one of complete_episodes");
  CHECK(error_of("model:\n  memory:\n    type: lstm\n") ==
        "x.yaml:3: model.memory.type = 'lstm' is not one of ffm, gru, kf, shm, spiking, stm");
  CHECK(error_of("model:\n  memory:\n    kf:\n      variant: kalman\n") ==
        "x.yaml:4: model.memory.kf.variant = 'kalman' is not one of kf, kf_u, vssm");
  CHECK(error_of("model:\n  memory:\n    spiking:\n      gate: [spike]\n") ==
        "x.yaml:4: model.memory.spiking.gate: expected a string, got a list");
  CHECK(parse("model:\n  memory:\n    spiking:\n      surrogate: gaussian\n").model.memory.spiking.surrogate ==
        rlm::memory::SpikingSurrogate::kGaussian);
  // env.options: only the fields the env's family reads.
  CHECK(error_of("env:\n  options:\n    corridor_length: 50\n") ==
        "x.yaml:3: env.options.corridor_length: env popgym/RepeatFirstEasy takes no env.options");
  CHECK(parse("env:\n  id: memory_rl/TMazeActive\n  options:\n    corridor_length: 50\n").env.options.corridor_length ==
        50);
  CHECK(error_of("env:\n  id: kf/BestArm\n  options:\n    sigma_low: 3\n") ==
        "x.yaml:4: env.options.sigma_low = 3 exceeds env.options.sigma_high = 2");
  CHECK(error_of("env:\n  id: meta/Wind\n  options:\n    corridor_length: 5\n") ==
        "x.yaml:4: env.options.corridor_length: env meta/Wind reads only env.options.variant, env.options.train_tasks, "
        "env.options.task_split");
  CHECK(error_of("env:\n  id: meta/Wind\n  options:\n    task_split: test\n") ==
        "x.yaml:4: env.options.task_split = 'test' is not one of train, eval");
  CHECK(error_of("env:\n  options:\n    corridor_length: 0\n") ==
        "x.yaml:3: env.options.corridor_length = 0 is out of range [1, 1000000]");
  CHECK(error_of("experiment:\n  name: ''\n") == "x.yaml:2: experiment.name must not be empty");
  // grad_clip <= 0 means off, so any finite value is allowed.
  CHECK(parse("algo:\n  ppo:\n    grad_clip: -1\n").algo.ppo.grad_clip == -1.0);
}

TEST_CASE("cross-field checks show the numbers and point at a key that was set", "[config]") {
  CHECK(error_of("env:\n  num_envs: 4\nalgo:\n  ppo:\n    steps_per_env: 8\n    minibatch_size: 64\n") ==
        "x.yaml:6: algo.ppo.minibatch_size = 64 is larger than one rollout, env.num_envs * algo.ppo.steps_per_env = "
        "4 * 8 = 32");
  CHECK(error_of("", {"env.num_envs=4"}) ==
        "command line: env.num_envs=4: algo.ppo.minibatch_size = 8192 is larger than one rollout, "
        "env.num_envs * algo.ppo.steps_per_env = 4 * 1024 = 4096");
  CHECK(error_of("env:\n  num_threads: 128\n") == "x.yaml:2: env.num_threads = 128 is more than env.num_envs = 64");

  rlm::Config c;
  c.algo.ppo.minibatch_size = 100000;
  CHECK_THROWS_WITH(rlm::validate(c),
                    "algo.ppo.minibatch_size = 100000 is larger than one rollout, "
                    "env.num_envs * algo.ppo.steps_per_env = 64 * 1024 = 65536");
}

TEST_CASE("malformed YAML names file, line and column", "[config]") {
  CHECK(error_of("algo:\n  ppo:\n    lr: 1\n    gamma: [0.9, 0.8\nenv:\n") ==
        "x.yaml:5:4: malformed YAML: end of sequence flow not found");
  CHECK(error_of("algo: lr: 1\n") == "x.yaml:1:9: malformed YAML: illegal map value");
}

TEST_CASE("command-line overrides apply after the file", "[config]") {
  const rlm::Config c =
      parse("algo:\n  ppo:\n    lr: 1e-3\n    epochs: 3\n",
            {"algo.ppo.lr=1e-4", "experiment.seed=3", "model.ppo.head_sizes=[64,64]", "model.memory.type=gru",
             "model.memory.hidden_size=32", " env.id = popgym/CountRecallEasy",
             "eval={episodes: 5, deterministic: true}", "experiment.seed=4"});
  CHECK(c.algo.ppo.lr == 1e-4);
  CHECK(c.algo.ppo.epochs == 3);  // from the file
  CHECK(c.experiment.seed == 4);  // the last override wins
  CHECK(c.model.ppo.head_sizes == std::vector<int>{64, 64});
  CHECK(c.model.memory.hidden_size == 32);
  CHECK(c.env.id == "popgym/CountRecallEasy");
  CHECK(c.eval.episodes == 5);
  CHECK(c.eval.deterministic);
}

TEST_CASE("override errors quote the token", "[config]") {
  CHECK(error_of("", {"algo.ppo.lr=abc"}) == "command line: algo.ppo.lr=abc: expected a number, got 'abc'");
  CHECK(error_of("", {"algo.ppo.lr="}) == "command line: algo.ppo.lr=: expected a number, got nothing");
  CHECK(error_of("", {"algo.ppo.gamma=2"}) ==
        "command line: algo.ppo.gamma=2: algo.ppo.gamma = 2 is out of range [0, 1]");
  CHECK(error_of("", {"model.ppo.head_sizes=64"}) ==
        "command line: model.ppo.head_sizes=64: expected a list of integers, like [64, 64], got '64'");
  CHECK(error_of("", {"eval={episodes: x}"}) ==
        "command line: eval={episodes: x}: eval.episodes: expected an integer, got 'x'");
  CHECK(error_of("", {"model.ppo.head_sizes=[64,"})
            .starts_with("command line: model.ppo.head_sizes=[64,: malformed YAML value: "));
  CHECK(error_of("", {"algo.lerning_rate=1e-4"}) ==
        "command line: algo.lerning_rate=1e-4: unknown key 'algo.lerning_rate' (did you mean 'algo.ppo.lr'?)");
  CHECK(error_of("", {"memory.type=ffm"}) ==
        "command line: memory.type=ffm: unknown key 'memory.type' (did you mean 'model.memory.type'?)");
  CHECK(error_of("", {"algx.lr=1"}) == "command line: algx.lr=1: unknown key 'algx.lr' (did you mean 'algo.ppo.lr'?)");
  CHECK(error_of("", {"algo.zzzzzz=1"}) == "command line: algo.zzzzzz=1: unknown key 'algo.zzzzzz'");
  CHECK(error_of("", {"algo.ppo.lr"}) ==
        "command line: algo.ppo.lr: expected key.path=value (did you mean 'algo.ppo.lr=...'?)");
  CHECK(error_of("", {"algo.lerning_rate"}) ==
        "command line: algo.lerning_rate: expected key.path=value (did you mean 'algo.ppo.lr=...'?)");
  CHECK(
      error_of("", {"model.memory.type=lstm"}) ==
      "command line: model.memory.type=lstm: model.memory.type = 'lstm' is not one of ffm, gru, kf, shm, spiking, stm");
  // A bad override is reported even when the file is fine, and a bad file before any override.
  CHECK(error_of("algo:\n  ppo:\n    lr: fast\n", {"algo.ppo.lr=1"}) ==
        "x.yaml:3: algo.ppo.lr: expected a number, got 'fast'");
}

TEST_CASE("load_config reads a file and reports its path and line numbers", "[config]") {
  const rlm::Config c = rlm::load_config(data_dir() / "example.yaml", {"experiment.seed=5"});
  CHECK(c.experiment.name == "repeat_first_gru");
  CHECK(c.experiment.seed == 5);
  CHECK(c.env.num_envs == 16);
  CHECK(c.model.ppo.head_sizes == std::vector<int>{64, 64});
  CHECK(c.model.memory.type == "gru");
  CHECK(c.model.memory.hidden_size == 64);
  CHECK(c.algo.total_steps == 1500000);
  CHECK(c.algo.ppo.lr == 1e-4);
  CHECK(c.algo.ppo.gamma == 0.99);

  const std::filesystem::path bad = data_dir() / "bad_gamma.yaml";
  CHECK_THROWS_WITH(rlm::load_config(bad), bad.string() + ":10: algo.ppo.gamma = 1.5 is out of range [0, 1]");

  const std::filesystem::path missing = data_dir() / "nope.yaml";
  CHECK_THROWS_AS(rlm::load_config(missing), rlm::ConfigError);
  CHECK_THROWS_WITH(rlm::load_config(missing), "config file '" + missing.string() + "' not found");
  CHECK_THROWS_WITH(rlm::load_config("configs/nope.yaml"), "config file 'configs/nope.yaml' not found");
}
