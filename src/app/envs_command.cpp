// `rlm envs`: every registered environment id with its observation and action spaces and maximum episode length.
#include <fmt/format.h>

#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "envs/registry.hpp"

namespace rlm::app {

int envs_command(const Args& args) {
  parse_args(args, {}, {}, false);
  fmt::print("{:<36} {:<34} {:<20} {}\n", "id", "observation", "action", "max steps");
  for (const auto& id : envs::registered_env_ids()) {
    const auto env = envs::make_env(id, {.previous_action = false, .antialias = false, .flatten = false});
    fmt::print("{:<36} {:<34} {:<20} {}\n", id, env->observation_space().to_string(), env->action_space().to_string(),
               env->max_episode_steps());
  }
  return 0;
}

}  // namespace rlm::app
