// Best-Arm identification (KF paper Sec. 5.2); see best_arm.hpp.
#include "envs/kf/best_arm.hpp"

#include <fmt/format.h>

#include <limits>

#include "core/error.hpp"

namespace rlm::envs::kf {

BestArm::BestArm(std::string id, BestArmConfig config)
    : id_(std::move(id)),
      observation_space_(
          Space::box({-std::numeric_limits<float>::infinity()}, {std::numeric_limits<float>::infinity()})),
      config_(config) {
  if (!(config.sigma_low >= 0 && config.sigma_low <= config.sigma_high))
    throw EnvError(
        fmt::format("{}: need 0 <= sigma_low <= sigma_high, got {} and {}", id_, config.sigma_low, config.sigma_high));
}

void BestArm::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  mean_ = rng_.uniform(-0.5, 0.5);
  sigma_ = rng_.uniform(config_.sigma_low, config_.sigma_high);
  t_ = 0;
  running_ = true;
  obs[0] = 0.0f;
}

StepResult BestArm::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (!running_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  ++t_;
  StepResult r;
  if (a == 0) {
    obs[0] = static_cast<float>(mean_ + sigma_ * rng_.standard_normal());
    r.reward = static_cast<float>(-config_.request_cost);
    if (t_ >= kMaxSteps) {  // out of time: the wrong-decision penalty
      r.reward -= kDecisionReward;
      r.terminated = true;
    }
  } else {
    // μ = 0 exactly has probability zero; it counts as "not > 0".
    r.success = (a == 1) == (mean_ > 0);
    r.reward = r.success ? kDecisionReward : -kDecisionReward;
    r.terminated = true;
    obs[0] = 0.0f;  // no sample follows a decision
  }
  running_ = !r.terminated;
  return r;
}

}  // namespace rlm::envs::kf
