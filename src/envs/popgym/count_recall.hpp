// Memory skill: order-agnostic counting (a running histogram recalled on demand). Follows
// popgym/envs/count_recall.py (proroklab/popgym@410d5aa, v1.0.7).
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/card_category.hpp"
#include "envs/popgym/deck.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct CountRecallConfig {
  int num_decks = 1;                              ///< N = 52 * num_decks cards per deck; N-1 steps
  CardCategory deck_type = CardCategory::Colors;  ///< what is counted: D = 2, 4 or 13 categories
  /// popgym <= 1.0.6 (and SHM's vendored copy) used Discrete(M) for the answer, M = N/D, so the count M could never
  /// be given; 1.0.7 fixed it to Discrete(M+1). true reproduces the old space (default: 1.0.7).
  /// (Upstream's error_clamp argument is accepted there but never read, so it has no counterpart here.)
  bool legacy_action_space = false;
};

/// Two independent shoes, a value deck and a query deck, deal one card each per step: obs = [category of the value
/// card, category of the query card]. At step t the agent must answer how many value cards of category q_{t-1} have
/// been dealt up to and including v_{t-1}; every step is scored +-1/(N-1).
class CountRecall final : public Env, public GoldenReplayEnv {
 public:
  static constexpr int kMaxCategories = 13;

  CountRecall(std::string id, CountRecallConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return value_deck_.num_cards() - 1; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// (counts / M (D floats), query counts / M (D floats), last obs (2)): popgym's get_state.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode from both deck orders popgym recorded right after reset
  /// ({"value_idx": [...], "query_idx": [...]}, scripts/popgym_golden/count_recall.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  // Hidden state, for tests and debugging.
  int num_categories() const { return num_categories_; }
  /// M = N/D, the most cards of one category in the value deck.
  int max_card_count() const { return max_card_count_; }
  /// The answer the next step scores as correct: the value count of the current query's category.
  int target() const { return counts_[static_cast<size_t>(query_)]; }
  const std::array<int, kMaxCategories>& counts() const { return counts_; }
  const std::array<int, kMaxCategories>& query_counts() const { return query_counts_; }
  const Deck& value_deck() const { return value_deck_; }
  const Deck& query_deck() const { return query_deck_; }

 private:
  void start_episode(std::span<float> obs);
  void deal(std::span<float> obs);  // one card from each deck: counts and obs

  std::string id_;
  CardCategory deck_type_;
  int num_categories_;
  int max_card_count_;
  Space observation_space_;
  Space action_space_;
  Space state_space_;
  Deck value_deck_;
  Deck query_deck_;
  Rng rng_;
  float reward_scale_;
  int value_ = 0;
  int query_ = 0;
  std::array<int, kMaxCategories> counts_{};
  std::array<int, kMaxCategories> query_counts_{};
};

}  // namespace rlm::envs::popgym
