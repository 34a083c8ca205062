#include "agents/gae.hpp"

#include <cassert>

namespace rlm::agents {

void compute_gae(std::span<const float> rewards, std::span<const float> values, float bootstrap_value, float gamma,
                 float lambda, std::span<float> advantages) {
  assert(rewards.size() == values.size() && advantages.size() == values.size());
  float next_value = bootstrap_value;
  float running = 0.0f;
  for (size_t i = rewards.size(); i-- > 0;) {
    const float delta = rewards[i] + gamma * next_value - values[i];
    running = delta + gamma * lambda * running;
    advantages[i] = running;
    next_value = values[i];
  }
}

}  // namespace rlm::agents
