// Memory skill: estimate each arm's payout rate by averaging noisy outcomes over the episode (explore, then exploit).
// Follows popgym/envs/multiarmed_bandit.py (proroklab/popgym@410d5aa, v1.0.7).
//
// Upstream details mirrored: each arm's payout probability is a float32 U[0,1) drawn at reset; a pull pays when a
// float64 U[0,1) draw is below it, and popgym compares the two in float32 (numpy >= 2 casts the Python float to the
// numpy scalar's float32, NEP 50), so the draw is rounded to float32 first. Step L truncates (the counter is tested
// before it is incremented); the episode never terminates. Stepping after the end continues as upstream does.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct MultiarmedBanditConfig {
  int num_bandits = 10;      ///< n arms: action Discrete(n)
  int episode_length = 200;  ///< L: truncated at step L; every pull is scored +-1/L
};

/// obs Discrete(2): 1 if the pulled arm paid out (0 at reset); reward +1/L on a payout, -1/L otherwise.
class MultiarmedBandit final : public Env, public GoldenReplayEnv {
 public:
  MultiarmedBandit(std::string id, MultiarmedBanditConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return episode_length_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// popgym's get_state(): the payout probabilities, Box(0, 1, (n,)).
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode with the payout probabilities popgym drew at reset
  /// ({"bandits": [...]}, see scripts/popgym_golden/multiarmed_bandit.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;
  /// Test hook: the NEXT step compares `draws[0]` (numpy's U[0,1) double) instead of drawing from the env's Rng.
  /// Exactly one draw per step; throws rlm::EnvError otherwise.
  void inject_draws(std::span<const double> draws) override;

  // Hidden state, for tests and debugging (upstream's info["bandits"]).
  const std::vector<float>& bandits() const { return bandits_; }
  int steps() const { return steps_; }

 private:
  void start_episode(std::span<float> obs);

  std::string id_;
  int num_bandits_;
  int episode_length_;
  Space observation_space_ = Space::discrete(2);
  Space action_space_;
  Space state_space_;
  float reward_scale_;
  Rng rng_;
  std::vector<float> bandits_;
  int steps_ = 0;
  bool has_state_ = false;  // step() before the first reset() is an error
  bool has_injected_ = false;
  double injected_draw_ = 0;
};

}  // namespace rlm::envs::popgym
