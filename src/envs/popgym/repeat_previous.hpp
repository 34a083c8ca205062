// Memory skill: a sliding window of length k (recall the suit seen k-1 observations before the current one). Follows
// popgym/envs/repeat_previous.py (proroklab/popgym@410d5aa, v1.0.7; note upstream's k is off by one relative to its
// docstring, and we keep upstream's behaviour).
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/deck.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct RepeatPreviousConfig {
  int num_decks = 1;  ///< episode length is 52 * num_decks - 1 steps
  int k = 4;          ///< at step t >= k the target is the obs returned at step t-k (the reset obs is step 0)
};

/// Steps 1..k-1 give reward exactly 0; steps k..N-1 are scored +-1/(N-k), so a perfect episode returns +1.
class RepeatPrevious final : public Env, public GoldenReplayEnv {
 public:
  RepeatPrevious(std::string id, RepeatPreviousConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return deck_.num_cards() - 1; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// (suits of the last k cards dealt, oldest first, left-padded with 0 while fewer than k were dealt;
  /// 1 - dealt_s / (N/4) per suit as float32, the first card counted): popgym's get_state.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  // Hidden state, for tests and debugging.
  int k() const { return k_; }
  /// The suit the next step scores against, or -1 while the next step is unscored (fewer than k cards dealt).
  int target_suit() const { return deck_.num_dealt() >= k_ ? Deck::suit(deck_.recent(k_)) : -1; }
  const Deck& deck() const { return deck_; }
  /// Cards dealt per suit, the first card included.
  const std::array<int, Deck::kNumSuits>& dealt_per_suit() const { return dealt_per_suit_; }

  /// Test hook for the golden replays: start the episode from the deck order popgym recorded right after reset
  /// ({"deck_idx": [...]}) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

 private:
  void deal_card(std::span<float> obs);  // deals one card, counts its suit and writes it as the obs

  std::string id_;
  Space observation_space_ = Space::discrete(Deck::kNumSuits);
  Space action_space_ = Space::discrete(Deck::kNumSuits);
  Space state_space_;
  Deck deck_;
  Rng rng_;
  int k_;
  float reward_scale_;
  std::array<int, Deck::kNumSuits> dealt_per_suit_{};
};

}  // namespace rlm::envs::popgym
