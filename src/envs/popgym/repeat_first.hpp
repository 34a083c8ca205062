// Memory skill: hold one item for the whole episode (recall the first suit seen). Follows popgym/envs/repeat_first.py
// (proroklab/popgym@410d5aa, v1.0.7).
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/deck.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct RepeatFirstConfig {
  int num_decks = 1;  ///< episode length is 52 * num_decks - 1 steps
};

/// Each step the agent names the suit of the card it saw at reset; every step is scored +-1/(N-1), N = 52*num_decks.
class RepeatFirst final : public Env, public GoldenReplayEnv {
 public:
  RepeatFirst(std::string id, RepeatFirstConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return deck_.num_cards() - 1; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// (target suit, 1 - dealt_s / (N/4) per suit as float32, the first card counted): popgym's get_state.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode from the hidden state popgym recorded right after reset
  /// ({"deck_idx": [...]}, see scripts/popgym_golden/repeat_first.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  // Hidden state, for tests and debugging (popgym's get_state).
  int target_suit() const { return target_suit_; }
  const Deck& deck() const { return deck_; }
  /// Cards dealt per suit, the first card included.
  const std::array<int, Deck::kNumSuits>& dealt_per_suit() const { return dealt_per_suit_; }

 private:
  void start_episode(std::span<float> obs);  // deals the first card from the shuffled deck

  std::string id_;
  Space observation_space_ = Space::discrete(Deck::kNumSuits);
  Space action_space_ = Space::discrete(Deck::kNumSuits);
  Space state_space_ = Space::tuple({Space::discrete(Deck::kNumSuits), Space::box({0, 0, 0, 0}, {1, 1, 1, 1})});
  Deck deck_;
  Rng rng_;
  float reward_scale_;
  int target_suit_ = 0;
  std::array<int, Deck::kNumSuits> dealt_per_suit_{};
};

}  // namespace rlm::envs::popgym
