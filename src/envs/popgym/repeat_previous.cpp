// RepeatPrevious (memory skill: a sliding window of k observations); follows popgym/envs/repeat_previous.py.
#include "envs/popgym/repeat_previous.hpp"

#include <fmt/format.h>

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
}

void RepeatPrevious::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  deck_.reset(rng_);
  obs[0] = static_cast<float>(Deck::suit(deck_.deal()));
}

void RepeatPrevious::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  deck_.set_order(state.at("deck_idx").get<std::vector<int>>());
  obs[0] = static_cast<float>(Deck::suit(deck_.deal()));
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
  obs[0] = static_cast<float>(Deck::suit(deck_.deal()));
  return r;
}

}  // namespace rlm::envs::popgym
