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
    const auto& options = envs::env_option_keys(id);
    fmt::print("{:<36} {:<34} {:<20} {:<10} {}\n", id, env->observation_space().to_string(),
               env->action_space().to_string(), env->max_episode_steps(),
               options.empty() ? "-" : fmt::format("{}", fmt::join(options, ", ")));
  }
  // The one family whose episodes cannot equal the reference's: a different engine version underneath.
  fmt::print(
      "\nbox2d/*: Box2D 2.4.1 with Box2D 2.3's joint-limit rule and wake-ups emulated (Gymnasium's pybox2d runs 2.3):\n"
      "returns agree with Gymnasium's statistically, within the shifts in docs/RESULTS.md (\"Box2D against\n"
      "Gymnasium\"; random landers score about 25 lower), not episode by episode.\n");
  return 0;
}

}  // namespace rlm::app
