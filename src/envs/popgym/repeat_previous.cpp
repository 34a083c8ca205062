// RepeatPrevious (memory skill: a sliding window of k observations); follows popgym/envs/repeat_previous.py.
#include "envs/popgym/repeat_previous.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace rlm::envs::popgym {

RepeatPrevious::RepeatPrevious(std::string id, RepeatPreviousConfig config)
    : id_(std::move(id)), deck_(config.num_decks >= 1 ? config.num_decks : 1), k_(config.k) {
  if (config.num_decks < 1) throw EnvError(fmt::format("{}: num_decks must be >= 1, got {}", id_, config.num_decks));
  if (k_ < 1 || k_ >= deck_.num_cards())
    throw EnvError(
        fmt::format("{}: k must be in [1, {}) for {} deck(s), got {}", id_, deck_.num_cards(), config.num_decks, k_));
  // Steps k..N-1 are scored: N-k of them.
  reward_scale_ = static_cast<float>(1.0 / (deck_.num_cards() - k_));
  state_space_ = Space::tuple({Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(k_), Deck::kNumSuits)),
                               Space::box({0, 0, 0, 0}, {1, 1, 1, 1})});
}

void RepeatPrevious::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  deck_.reset(rng_);
  dealt_per_suit_ = {};
  deal_card(obs);
}

void RepeatPrevious::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  deck_.set_order(state.at("deck_idx").get<std::vector<int>>());
  dealt_per_suit_ = {};
  deal_card(obs);
}

StepResult RepeatPrevious::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (deck_.remaining() == 0) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  StepResult r;
  // Upstream's hand_size >= k test: at step t the hand holds t cards (the reset card plus t-1 dealt by steps),
  // and hand[-k] is the card whose suit was the obs of step t-k.
  if (deck_.num_dealt() >= k_) r.reward = a == Deck::suit(deck_.recent(k_)) ? reward_scale_ : -reward_scale_;
  r.terminated = deck_.remaining() == 1;  // before dealing, as upstream
  deal_card(obs);
  return r;
}

void RepeatPrevious::deal_card(std::span<float> obs) {
  const int suit = Deck::suit(deck_.deal());
  ++dealt_per_suit_[static_cast<size_t>(suit)];
  obs[0] = static_cast<float>(suit);
}

void RepeatPrevious::write_state(std::span<float> state) const {
  // The hand keeps every dealt card; its last k, oldest first, are recent(k) .. recent(1).
  const int shown = std::min(k_, deck_.num_dealt());
  for (int i = 0; i < k_ - shown; ++i) state[static_cast<size_t>(i)] = 0.0f;
  for (int j = shown; j >= 1; --j) state[static_cast<size_t>(k_ - j)] = static_cast<float>(Deck::suit(deck_.recent(j)));
  // popgym computes the fractions in float64 and casts them to float32.
  const double per_suit = deck_.num_cards() / 4.0;
  for (size_t s = 0; s < dealt_per_suit_.size(); ++s)
    state[static_cast<size_t>(k_) + s] = static_cast<float>(1.0 - dealt_per_suit_[s] / per_suit);
}

}  // namespace rlm::envs::popgym
