// Config input that used to pass validation and fail (or run wrongly) later: numbers beyond float32, unbounded
// thread counts, run names that escape runs_dir, several YAML documents, unterminated quotes, cross-field checks of
// the backends; and the resume policy, which keys `train --resume` may change.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agents/experiment_config.hpp"
#include "core/config_test_util.hpp"
#include "core/error.hpp"
#include "core/resume_policy.hpp"
#include "core/text_checks.hpp"

namespace {

using rlm::is_valid_utf8;
using rlm::config_test::error_of;

}  // namespace

TEST_CASE("numbers beyond float32 are rejected where they are written", "[config]") {
  CHECK(error_of("algo:\n  ppo:\n    lr: 1e39\n") ==
        "x.yaml:3: algo.ppo.lr = 1e+39 is too large (float32 holds at most 3.403e+38)");
  CHECK_THAT(error_of("algo:\n  ppo:\n    grad_clip: -1e39\n"),
             Catch::StartsWith("x.yaml:3: algo.ppo.grad_clip = -1e+39 is too large"));
  CHECK_THAT(error_of("", {"model.memory.ffm.max_period=1e300"}),
             Catch::StartsWith("command line: model.memory.ffm.max_period=1e300: model.memory.ffm.max_period"));
  CHECK_THAT(error_of("model:\n  memory:\n    spiking:\n      noise_high: 5e38\n"),
             Catch::StartsWith("x.yaml:4: model.memory.spiking.noise_high"));
  CHECK_THAT(error_of("algo:\n  ppo:\n    lr: .inf\n"), Catch::Contains("expected a number"));
  CHECK_THAT(error_of("algo:\n  ppo:\n    kl_coeff: nan\n"), Catch::Contains("expected a number"));
  CHECK(error_of("algo:\n  ppo:\n    lr: 3e38\n").empty());
}

TEST_CASE("thread counts are bounded", "[config]") {
  CHECK(error_of("experiment:\n  torch_threads: 1000000\n") ==
        "x.yaml:2: experiment.torch_threads = 1000000 is out of range [0, 1024]");
  CHECK_THAT(error_of("env:\n  num_threads: 5000\n  num_envs: 6000\n"), Catch::Contains("env.num_threads = 5000"));
  CHECK(error_of("experiment:\n  torch_threads: 1024\n").empty());
}

TEST_CASE("layer widths and env counts are bounded, so a typo is no 8 GB allocation", "[config]") {
  CHECK(error_of("model:\n  ppo:\n    feature_size: 2147483647\n") ==
        "x.yaml:3: model.ppo.feature_size = 2147483647 is out of range [1, 32768]");
  CHECK_THAT(error_of("model:\n  ppo:\n    head_sizes: [64, 100000]\n"),
             Catch::Contains("model.ppo.head_sizes[1] = 100000"));
  CHECK_THAT(error_of("env:\n  num_envs: 1000000\n"), Catch::Contains("env.num_envs = 1000000 is out of range"));
  CHECK(error_of("model:\n  memory:\n    hidden_size: 2048\n").empty());
}

TEST_CASE("experiment.name is one folder name inside runs_dir", "[config]") {
  for (const std::string bad : {"a/b", "../escape", "/abs", "..", ".", "x\\\\y"}) {
    INFO(bad);
    CHECK_THAT(error_of("experiment:\n  name: \"" + bad + "\"\n"),
               Catch::StartsWith("x.yaml:2: experiment.name = ") && Catch::Contains("must be one folder name"));
  }
  CHECK_THAT(error_of("experiment:\n  name: \"a\\0b\"\n"),
             Catch::Contains("<with control characters or invalid UTF-8>"));
  CHECK_THAT(error_of("experiment:\n  name: " + std::string(101, 'n') + "\n"), Catch::Contains("at most 100"));
  CHECK_THAT(error_of("", {"experiment.name=a/b"}), Catch::StartsWith("command line: experiment.name=a/b: "));
  CHECK(error_of("experiment:\n  name: shm_popgym-seed.3\n").empty());
  CHECK(error_of("experiment:\n  runs_dir: \"a\\0b\"\n") ==
        "x.yaml:2: experiment.runs_dir must be UTF-8 without control characters");
  // Invalid UTF-8 inside the file, raw and as a YAML escape (\xff is U+00FF, valid once decoded); the command
  // line gets the same check.
  CHECK_THAT(error_of("experiment:\n  name: ab\xff\n"),
             Catch::StartsWith("x.yaml:2: experiment.name = ") && Catch::Contains("invalid UTF-8"));
  CHECK_THAT(error_of("", {"experiment.name=ab\xc3"}), Catch::Contains("invalid UTF-8"));
  CHECK(error_of("experiment:\n  name: \"ab\\xff\"\n").empty());
  CHECK(error_of("experiment:\n  name: café-θ\n").empty());
  CHECK_THAT(error_of("experiment:\n  runs_dir: " + std::string(3801, 'r') + "\n"),
             Catch::Contains("experiment.runs_dir is too long"));
  CHECK_THAT(error_of("experiment:\n  runs_dir: a/" + std::string(256, 'r') + "/b\n"),
             Catch::Contains("a folder name of 256"));
}

TEST_CASE("is_valid_utf8 follows the Unicode well-formed byte sequences", "[config]") {
  for (const std::string good : {"", "abc", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf"}) {
    INFO(good);
    CHECK(is_valid_utf8(good));
  }
  // stray continuation, truncated, overlong (2 and 3 bytes), surrogate, above U+10FFFF, bytes never used
  for (const std::string bad :
       {"\x80", "\xc3", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "a\xe2\x82"}) {
    INFO(bad);
    CHECK_FALSE(is_valid_utf8(bad));
  }
}

TEST_CASE("a config file is one YAML document", "[config]") {
  CHECK(error_of("algo:\n  ppo:\n    lr: 0.1\n---\nalgo:\n  lr: 0.2\n") ==
        "x.yaml:5: holds 2 YAML documents ('---' starts another); a config is one document");
  CHECK(error_of("---\nalgo:\n  ppo:\n    lr: 0.1\n").empty());  // a leading marker is still one document
}

TEST_CASE("an unterminated quote is malformed YAML, not a string swallowing the file", "[config]") {
  CHECK(error_of("experiment:\n  name: \"abc\nalgo:\n  ppo:\n    lr: 0.1\n") ==
        "x.yaml:2:9: malformed YAML: unterminated double quote");
  CHECK(error_of("experiment:\n  name: 'abc\nalgo:\n  ppo:\n    lr: 0.1\n") ==
        "x.yaml:2:9: malformed YAML: unterminated single quote");
  CHECK_THAT(error_of("", {"experiment.name=\"abc"}),
             Catch::StartsWith("command line: experiment.name=\"abc: malformed YAML value"));
  // Closed quotes with escapes stay fine.
  CHECK(error_of("experiment:\n  name: \"a\\\"b\"\n").empty());
  CHECK(error_of("experiment:\n  name: 'it''s'\n").empty());
  CHECK(rlm::parse_config("experiment:\n  name: 'it''s'\n", "x.yaml").experiment.name == "it's");
}

TEST_CASE("backend cross-field checks name file, line and key", "[config]") {
  CHECK(error_of("model:\n  memory:\n    spiking:\n      noise_low: 2\n      noise_high: 1\n") ==
        "x.yaml:4: model.memory.spiking.noise_low = 2 exceeds model.memory.spiking.noise_high = 1");
  CHECK_THAT(error_of("model:\n  memory:\n    spiking:\n      leak_init: 1\n"),
             Catch::StartsWith("x.yaml:4: model.memory.spiking.leak_init = 1 is out of range (0, 1)"));
  CHECK_THAT(error_of("model:\n  memory:\n    kf:\n      variant: vssm\n      process_noise: input_dependent\n"),
             Catch::StartsWith("x.yaml:5: model.memory.kf.process_noise = input_dependent needs variant kf"));
  CHECK_THAT(error_of("model:\n  memory:\n    kf:\n      variant: vssm\n      output_features: mean_cov\n"),
             Catch::StartsWith("x.yaml:5: model.memory.kf.output_features = mean_cov"));
  // The same checks run wherever the struct sits: the off-policy trainers' per-network memories too.
  CHECK(error_of("algo:\n  type: sac\nmodel:\n  off_policy:\n    actor_memory:\n      spiking:\n"
                 "        noise_low: 2\n        noise_high: 1\n") ==
        "x.yaml:7: model.off_policy.actor_memory.spiking.noise_low = 2 exceeds "
        "model.off_policy.actor_memory.spiking.noise_high = 1");
  CHECK_THAT(
      error_of("algo:\n  type: sac\nmodel:\n  off_policy:\n    critic_memory:\n      kf:\n"
               "        variant: vssm\n        output_features: mean_cov\n"),
      Catch::StartsWith("x.yaml:8: model.off_policy.critic_memory.kf.output_features = mean_cov needs variant kf"));
}

TEST_CASE("locate names where a key was set", "[config]") {
  rlm::ConfigOrigins origins;
  rlm::parse_config("env:\n  num_envs: 8\n  id: popgym/Nope\n", "x.yaml", {"experiment.device=cuda"}, &origins);
  CHECK(rlm::locate(origins, "env.id", "x.yaml", "unknown env id") == "x.yaml:3: unknown env id");
  CHECK(rlm::locate(origins, "experiment.device", "x.yaml", "no GPU") ==
        "command line: experiment.device=cuda: no GPU");
  CHECK(rlm::locate(origins, "algo.ppo.max_seq_len", "x.yaml", "too short") == "x.yaml: too short");
}

TEST_CASE("parse_integer accepts what config integers accept, nothing else", "[config]") {
  CHECK(rlm::parse_integer("1000") == 1000);
  CHECK(rlm::parse_integer("1e3") == 1000);
  CHECK(rlm::parse_integer("+7") == 7);
  CHECK_FALSE(rlm::parse_integer("3abc"));
  CHECK_FALSE(rlm::parse_integer("1.5"));
  CHECK_FALSE(rlm::parse_integer(""));
  CHECK_FALSE(rlm::parse_integer("1e30"));
}

TEST_CASE("resume policy: budgets and optimiser settings apply, what built the run is refused", "[config][resume]") {
  for (const std::string key : {"algo.ppo.lr", "algo.total_steps", "algo.ppo.epochs", "algo.ppo.adam_eps",
                                "algo.ppo.entropy_coeff", "logging.every", "checkpoint.every", "checkpoint.keep_last",
                                "eval.episodes", "experiment.torch_threads", "experiment.device", "env.num_threads"}) {
    INFO(key);
    CHECK_FALSE(rlm::resume_refusal(key));
  }
  for (const std::string key :
       {"model.memory.hidden_size", "model.ppo.head_sizes", "model.memory.type", "env.id", "env.num_envs",
        "env.previous_action", "experiment.seed", "experiment.name", "algo.ppo.kl_coeff", "algo.type"}) {
    INFO(key);
    CHECK(rlm::resume_refusal(key));
  }
  // Every key of the config is classified one way or the other, and a refused one has a reason.
  const rlm::Config defaults;  // named: GCC 12 warns on destroying a temporary Config
  for (const auto& [key, value] : rlm::config_values(defaults)) {
    const auto reason = rlm::resume_refusal(key);
    if (reason) CHECK_FALSE(reason->empty());
  }
}

TEST_CASE("check_resume_changes names the override of a refused key", "[config][resume]") {
  const rlm::Config saved = rlm::parse_config("env:\n  num_envs: 8\n", "run/config.yaml");
  rlm::ConfigOrigins origins;
  const rlm::Config lr = rlm::parse_config("env:\n  num_envs: 8\n", "run/config.yaml", {"algo.ppo.lr=0.001"}, &origins);
  CHECK_NOTHROW(rlm::check_resume_changes(rlm::config_values(saved), rlm::config_values(lr), origins));

  const rlm::Config wider =
      rlm::parse_config("env:\n  num_envs: 8\n", "run/config.yaml", {"model.memory.hidden_size=128"}, &origins);
  try {
    rlm::check_resume_changes(rlm::config_values(saved), rlm::config_values(wider), origins);
    FAIL("no error");
  } catch (const rlm::ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "command line: model.memory.hidden_size=128: model.memory.hidden_size cannot change on resume (the "
          "checkpoint holds a model of the saved architecture; the run has 256); start a new run with --config "
          "instead");
  }
  // Setting a refused key to the value it already has is no change.
  const rlm::Config same = rlm::parse_config("env:\n  num_envs: 8\n", "run/config.yaml", {"env.num_envs=8"}, &origins);
  CHECK_NOTHROW(rlm::check_resume_changes(rlm::config_values(saved), rlm::config_values(same), origins));
}

TEST_CASE("a key the chosen trainer does not read is an error, not a silently ignored setting", "[config]") {
  CHECK(error_of("algo:\n  type: sacd\n  ppo:\n    lr: 1e-3\n") ==
        "x.yaml:4: algo.ppo.lr is read by algo.type ppo; algo.type = sacd reads algo.off_policy, algo.sacd, "
        "model.off_policy");
  CHECK(error_of("algo:\n  type: sac\n", {"model.ppo.head_sizes=[32]"}) ==
        "command line: model.ppo.head_sizes=[32]: model.ppo.head_sizes is read by algo.type ppo; algo.type = sac "
        "reads algo.off_policy, algo.sac, model.off_policy");
  CHECK(error_of("algo:\n  sacd:\n    entropy_alpha: 0.2\n") ==
        "x.yaml:3: algo.sacd.entropy_alpha is read by algo.type sacd; algo.type = ppo reads algo.ppo, model.ppo");
  CHECK_THAT(error_of("algo:\n  type: sac\n  sacd:\n    target_entropy_ratio: 0.5\n"),
             Catch::EndsWith("algo.sacd.target_entropy_ratio is read by algo.type sacd; algo.type = sac reads "
                             "algo.off_policy, algo.sac, model.off_policy"));
  CHECK_THAT(error_of("model:\n  off_policy:\n    critic_memory:\n      type: shm\n"),
             Catch::EndsWith("model.off_policy.critic_memory.type is read by algo.type sac, sacd, td3; algo.type = "
                             "ppo reads algo.ppo, model.ppo"));
  // A value equal to the default changes nothing (a run folder's config.yaml writes every key).
  CHECK(error_of("algo:\n  type: sacd\n  ppo:\n    lr: 5e-05\n  sacd:\n    entropy_alpha: 0.1\n").empty());
  CHECK(error_of("algo:\n  type: td3\n  off_policy:\n    lr: 1e-3\n  td3:\n    target_noise: 0.3\n").empty());
  // Off-policy configs skip PPO's cross-field checks (minibatch vs rollout).
  CHECK(error_of("env:\n  num_envs: 1\nalgo:\n  type: sacd\n").empty());
  // Only a per-network memory may say "same".
  CHECK(error_of("algo:\n  type: sacd\nmodel:\n  off_policy:\n    actor_memory:\n      type: gru\n").empty());
  CHECK_THAT(error_of("model:\n  memory:\n    type: same\n"), Catch::Contains("is not one of ffm, gru"));
  // The resolved config of an off-policy run reads back as the same config.
  auto c =
      rlm::parse_config("algo:\n  type: sacd\nmodel:\n  off_policy:\n    critic_memory:\n      type: shm\n", "x.yaml");
  CHECK(rlm::parse_config(rlm::to_yaml(c), "config.yaml") == c);
}
