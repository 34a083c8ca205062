// Best-Arm identification, the task of KF paper §5.2 (Fig. 3-5; the paper's code is not public, so our choices fill its
// gaps and are stated here and in docs/envs/best_arm.md). Each episode hides an arm with mean μ ~ U(−0.5, 0.5) and
// noise σ ~ U(sigma_low, sigma_high) (training U(0, 2); out of distribution U(2, 3)). Actions Discrete(3): 0 requests a
// sample y ~ N(μ, σ²) at reward −request_cost and observes it; 1 declares μ > 0, 2 declares μ < 0, which ends the
// episode with +10 if right and −10 if wrong. 1000 steps without a decision end it with −10. Obs: Box(1), the latest
// sample; 0 at reset (our choice: no information, and a_{-1} = 0 tells the start apart). The decision step ends the MDP
// (terminated), and so does the 1000-step limit, since it carries the penalty (the task's own end, not a cut-off).
// Success: a right decision.
#pragma once
#include <string>

#include "envs/env.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::kf {

struct BestArmConfig {
  double request_cost = 0.0;  ///< ρ
  double sigma_low = 0.0;     ///< σ ~ U(sigma_low, sigma_high)
  double sigma_high = 2.0;
};

class BestArm final : public Env {
 public:
  using Config = BestArmConfig;
  static constexpr int64_t kMaxSteps = 1000;
  static constexpr float kDecisionReward = 10.0f;  ///< +10 right (KF paper §5.2); −10 wrong or out of time (our choice)

  BestArm(std::string id, BestArmConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return kMaxSteps; }
  bool reports_success() const override { return true; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  double mean() const { return mean_; }  ///< μ of this episode
  double sigma() const { return sigma_; }

 private:
  std::string id_;
  Space observation_space_;
  Space action_space_ = Space::discrete(3);
  Rng rng_;
  BestArmConfig config_;
  double mean_ = 0.0, sigma_ = 0.0;
  int64_t t_ = 0;
  bool running_ = false;
};

}  // namespace rlm::envs::kf
