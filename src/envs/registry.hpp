// Env ids -> env objects. Difficulty levels are data (one table row per family, STYLE principle 3) and ids are
// generated from family + level, so a typo in an id string cannot exist. Both spellings are accepted:
// "popgym/RepeatFirstEasy" (canonical) and gymnasium's "popgym-RepeatFirstEasy-v0".
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_config.hpp"

namespace rlm::envs {

struct WrapperOptions {
  bool previous_action = false;  ///< PreviousAction: append the previous action to the obs
  bool antialias = false;        ///< Antialias: append is_t0
  bool flatten = true;           ///< Flatten: one-hot encode the whole obs into a Box
  /// Markovian: "partial" (obs unchanged, no wrapper), "full" (obs = the env's state), "full_and_partial"
  /// (obs = Tuple(obs, state)); the levels other than partial need an env with a state_space().
  std::string markovian = "partial";
  bool discrete_action = false;  ///< DiscreteAction: a MultiDiscrete action becomes Discrete(prod nvec)
};

/// The wrappers an env section of a config asks for; the trainer's input is always flattened (one-hot).
WrapperOptions wrapper_options(const EnvConfig& config);

/// The canonical spelling of `id`; an unknown id throws rlm::EnvError naming up to 3 closest registered ids.
std::string canonical_env_id(const std::string& id);

/// The env.options keys that `id` (either spelling) reads, in config.yaml's order: the keys of the option groups its
/// registry row names; none for POPGym, whose levels are in the id. An unknown id throws as canonical_env_id does.
const std::vector<std::string>& env_option_keys(const std::string& id);

/// Why `id` ignores env.options.`key`, as a config error says it ("env.options.x: env ID reads only env.options.a,
/// env.options.b", or "takes no env.options"); nullopt when `id` reads it. An unknown id throws as canonical_env_id
/// does.
std::optional<std::string> unread_option_reason(const std::string& id, std::string_view key);

/// A fresh env, wrapped in the order previous_action, antialias, markovian, flatten, discrete_action (the POPGym
/// paper pipeline is Flatten(Antialias(PreviousAction(env))); memory-monoids adds DiscreteAction on top).
/// `env_options` parameterises the families that read env.options (T-maze's corridor length, ...).
std::unique_ptr<Env> make_env(const std::string& id, const WrapperOptions& options = {},
                              const EnvOptions& env_options = {});

/// Every canonical id, in table order (family, then Easy/Medium/Hard; one id for a family parameterised by
/// env.options, e.g. memory_rl/TMazePassive).
std::vector<std::string> registered_env_ids();

}  // namespace rlm::envs
