// Env options (YAML section "env"), owned by the envs layer: wrapper_options(EnvConfig) maps them onto the Env
// decorators. Field syntax: core/config_schema.hpp.
#pragma once
#include <string>

#include "core/config_schema.hpp"

namespace rlm {

struct EnvConfig {
  /// Registered environment id.
  std::string id = "popgym/RepeatFirstEasy";
  /// Parallel environments (paper: 4 workers x 16 envs); at most 65536.
  int num_envs = 64;
  /// Threads stepping the environments.
  int num_threads = 1;
  /// Append the previous action (one-hot) to each observation, as POPGym does.
  bool previous_action = true;
  /// Append an is-first-step flag, so the null previous action at t=0 is not read as an action (popgym Antialias).
  bool antialias = true;
  /// popgym Markovian wrapper (debugging): partial = the POMDP obs; full = the env's full state as obs;
  /// full_and_partial = both.
  std::string markovian = "partial";
  /// Turn a MultiDiscrete action into one Discrete action over all combinations (popgym DiscreteAction).
  bool discrete_action = false;

  template <class V>
  void visit(V& v) {
    v.field("id", id, non_empty());
    v.field("num_envs", num_envs, in_range(1, 65536));
    v.field("num_threads", num_threads, in_range(1, 1024));
    v.field("previous_action", previous_action);
    v.field("antialias", antialias);
    v.field("markovian", markovian, one_of({"partial", "full", "full_and_partial"}));
    v.field("discrete_action", discrete_action);
  }
  bool operator==(const EnvConfig&) const = default;
};

}  // namespace rlm
