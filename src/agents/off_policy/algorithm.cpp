// Helpers the off-policy algorithms share (algorithm.hpp).
#include "agents/off_policy/algorithm.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::agents {

std::string describe_actions(const ActionSpec& spec) {
  if (spec.continuous) return fmt::format("Box with {} dimensions", spec.low.size());
  if (spec.nvec.size() == 1) return fmt::format("Discrete({})", spec.nvec[0]);
  return fmt::format("MultiDiscrete with {} components", spec.nvec.size());
}

void require_box_actions(const std::string& type, const ActionSpec& spec, const std::string& env_id) {
  if (!spec.continuous) {
    throw ConfigValueError("algo.type", fmt::format("algo.type = {} needs a Box action space, but {} has {} (use sacd)",
                                                    type, env_id, describe_actions(spec)));
  }
}

}  // namespace rlm::agents
