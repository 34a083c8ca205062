#include "envs/env.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "envs/env_extensions.hpp"

namespace rlm::envs {

std::string gym_style_id(const std::string& canonical_id) {
  const auto slash = canonical_id.find('/');
  if (slash == std::string::npos) return canonical_id;
  return canonical_id.substr(0, slash) + "-" + canonical_id.substr(slash + 1) + "-v0";
}

void throw_invalid_action(const std::string& canonical_id, std::span<const float> action, const Space& action_space) {
  throw EnvError(fmt::format("{}: invalid action {} for action space {}", gym_style_id(canonical_id),
                             Space::format_value(action), action_space.to_string()));
}

void throw_env_misuse(const std::string& canonical_id, const char* what) {
  throw EnvError(fmt::format("{}: {}", gym_style_id(canonical_id), what));
}

void GoldenReplayEnv::inject_draws(std::span<const double> draws) {
  if (!draws.empty())
    throw EnvError(fmt::format("this env draws nothing in step(), but {} recorded draws were injected", draws.size()));
}

}  // namespace rlm::envs
