// The experiment's whole config: one section per layer's options (run settings from core, env from envs, model from
// agents and memory, algo from agents). Every hyperparameter is a named field with its default in its layer's struct;
// each struct's visit() lists its fields once with the valid range or choices, and that one list drives parsing,
// range checks, writing YAML and the known keys behind did-you-mean hints (core/config_reader.hpp).
// Adding a field: declare it with a /// comment and a default in its struct, then add one v.field(...) line to visit().
#pragma once
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "agents/algo_config.hpp"
#include "agents/model_config.hpp"
#include "core/config_io.hpp"
#include "core/run_config.hpp"
#include "envs/env_config.hpp"

namespace rlm {

struct Config {
  ExperimentConfig experiment;
  EnvConfig env;
  ModelConfig model;
  AlgoConfig algo;
  LoggingConfig logging;
  CheckpointConfig checkpoint;
  EvalConfig eval;

  template <class V>
  void visit(V& v) {
    v.section("experiment", experiment);
    v.section("env", env);
    v.section("model", model);
    v.section("algo", algo);
    v.section("logging", logging);
    v.section("checkpoint", checkpoint);
    v.section("eval", eval);
  }
  bool operator==(const Config&) const = default;
};

/// Reads a YAML file, then applies `overrides` ("key.path=value", value as a YAML scalar or flow list).
/// Missing keys keep their defaults. Throws ConfigError with a one-line message naming file, line and key path.
/// `origins`, if given, receives where each key was set, for errors found later (ConfigValueError).
Config load_config(const std::filesystem::path& file, const std::vector<std::string>& overrides = {},
                   ConfigOrigins* origins = nullptr);

/// As load_config, from text; `source_name` stands for the file in error messages.
Config parse_config(const std::string& yaml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides = {}, ConfigOrigins* origins = nullptr);

/// The fully resolved config, every key written; parse_config of it gives back an equal Config.
std::string to_yaml(const Config& config);

/// Cross-field checks (ranges of single fields are checked while parsing). Throws ConfigError showing the numbers.
void validate(const Config& config);

/// Every field's key path and its value as YAML text ("algo.ppo.lr" -> "5e-05"); sections are not listed.
std::map<std::string, std::string> config_values(const Config& config);

/// Every key path, sections included, in declaration order ("experiment", "experiment.name", ...).
std::vector<std::string> config_keys();

}  // namespace rlm
