// Error types the command line turns into one-line messages and exit codes (see src/app/main.cpp).
#pragma once
#include <stdexcept>
#include <string>

namespace rlm {

/// Bad user input: config file, command-line override, run folder. Exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A config value is wrong: the message names file, line and key path. Exit status 2.
struct ConfigError : UsageError {
  using UsageError::UsageError;
};

/// A config value that only a later stage can judge (an env id, a backend's combination of options, a device):
/// `key` is the key path at fault, and the command line prefixes the message with where that key was set
/// (file:line or the override), as it does for parse errors. Exit status 2.
struct ConfigValueError : ConfigError {
  ConfigValueError(std::string key_path, const std::string& message) : ConfigError(message), key(std::move(key_path)) {}
  std::string key;
};

/// An environment was misused (unknown id, invalid action): the message names env id and action.
struct EnvError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An env option (a wrapper's: markovian, discrete_action) that the chosen env cannot take; `option` is its key
/// under env, so the command line can say where it was set.
struct EnvOptionError : EnvError {
  EnvOptionError(std::string option_key, const std::string& message)
      : EnvError(message), option(std::move(option_key)) {}
  std::string option;
};

/// A checkpoint or other run file is missing, truncated or corrupt. Exit status 3.
struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Training produced a non-finite loss, gradient or parameter, or a KL beyond algo.ppo.max_kl: the run stops before
/// the bad state is checkpointed. Exit status 4.
struct DivergenceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace rlm
