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

/// An environment was misused (unknown id, invalid action): the message names env id and action.
struct EnvError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A checkpoint or other run file is missing, truncated or corrupt.
struct CheckpointError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace rlm
