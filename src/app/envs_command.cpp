// `rlm envs`: every registered environment id with its observation and action spaces, maximum episode length (at the
// default env.options) and the env.options it reads.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "envs/registry.hpp"

namespace rlm::app {

int envs_command(const Args& args) {
  parse_args(args, {}, {}, false);
  fmt::print("{:<36} {:<34} {:<20} {:<10} {}\n", "id", "observation", "action", "max steps", "env.options");
  for (const auto& id : envs::registered_env_ids()) {
    const auto env = envs::make_env(id, {.previous_action = false, .antialias = false, .flatten = false});
    const auto options = env_options_read_by(id);
    fmt::print("{:<36} {:<34} {:<20} {:<10} {}\n", id, env->observation_space().to_string(),
               env->action_space().to_string(), env->max_episode_steps(),
               options.empty() ? "-" : fmt::format("{}", fmt::join(options, ", ")));
  }
  return 0;
}

}  // namespace rlm::app
