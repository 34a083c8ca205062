// Memory skill: card counting (which ranks are left in the shoe) to call the next card higher or lower. Follows
// popgym/envs/higher_lower.py (proroklab/popgym@410d5aa, v1.0.7).
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/deck.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct HigherLowerConfig {
  int num_decks = 1;  ///< N = 52 * num_decks cards; N-1 guesses
};

/// obs = rank of the current card (Ace = 0 is low, King = 12); action 0 = "the next card is higher", 1 = "lower".
/// A tie pays 0, otherwise +-1/N. Upstream quirk, mirrored: the scale is 1/N although only N-1 guesses are scored,
/// so returns lie in [-(N-1)/N, (N-1)/N] (no option: it only rescales returns).
class HigherLower final : public Env, public GoldenReplayEnv {
 public:
  static constexpr int kNumRanks = 13;
  static constexpr int kHigher = 0;
  static constexpr int kLower = 1;

  HigherLower(std::string id, HigherLowerConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return deck_.num_cards() - 1; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// Box(0, 1, (13,)): cards seen per rank (the first included) / (4 * num_decks): popgym's get_state.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode from the deck order popgym recorded right after reset
  /// ({"deck_idx": [...]}, scripts/popgym_golden/higher_lower.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  // Hidden state, for tests and debugging.
  int current_rank() const { return current_rank_; }
  /// Rank of the card the next step deals (peeks into the shoe; for oracle test policies), -1 when none is left.
  int next_rank() const { return deck_.remaining() > 0 ? Deck::rank(deck_.order()[deck_.remaining() - 1]) : -1; }
  const std::array<int, kNumRanks>& seen_per_rank() const { return seen_per_rank_; }
  const Deck& deck() const { return deck_; }

 private:
  void start_episode(std::span<float> obs);

  std::string id_;
  Space observation_space_ = Space::discrete(kNumRanks);
  Space action_space_ = Space::discrete(2);
  Space state_space_ = Space::box(std::vector<float>(kNumRanks, 0.0f), std::vector<float>(kNumRanks, 1.0f));
  Deck deck_;
  Rng rng_;
  int num_decks_;
  float reward_scale_;
  int current_rank_ = 0;
  std::array<int, kNumRanks> seen_per_rank_{};
};

}  // namespace rlm::envs::popgym
