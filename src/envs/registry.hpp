// Env ids -> env objects. Difficulty levels are data (one table row per family, STYLE principle 3) and ids are
// generated from family + level, so a typo in an id string cannot exist. Both spellings are accepted:
// "popgym/RepeatFirstEasy" (canonical) and gymnasium's "popgym-RepeatFirstEasy-v0".
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "envs/env.hpp"

namespace rlm::envs {

struct WrapperOptions {
  bool previous_action = false;  ///< PreviousAction: append the previous action to the obs
  bool antialias = false;        ///< Antialias: append is_t0
  bool flatten = true;           ///< Flatten: one-hot encode the whole obs into a Box
};

/// The canonical spelling of `id`; an unknown id throws rlm::EnvError naming up to 3 closest registered ids.
std::string canonical_env_id(const std::string& id);

/// A fresh env, wrapped in the order previous_action, antialias, flatten (the POPGym paper pipeline is
/// Flatten(Antialias(PreviousAction(env)))).
std::unique_ptr<Env> make_env(const std::string& id, const WrapperOptions& options = {});

/// Every canonical id, in table order (family, then Easy/Medium/Hard).
std::vector<std::string> registered_env_ids();

}  // namespace rlm::envs
