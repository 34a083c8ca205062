// RepeatFirst (memory skill: hold one item for a whole episode); follows popgym/envs/repeat_first.py.
#include "envs/popgym/repeat_first.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::popgym {

RepeatFirst::RepeatFirst(std::string id, RepeatFirstConfig config)
    : id_(std::move(id)), deck_(config.num_decks >= 1 ? config.num_decks : 1) {
  if (config.num_decks < 1) throw EnvError(fmt::format("{}: num_decks must be >= 1, got {}", id_, config.num_decks));
  // Every one of the N-1 steps is scored, so a perfect episode returns exactly +1 and an all-wrong one -1.
  reward_scale_ = static_cast<float>(1.0 / (deck_.num_cards() - 1));
}

void RepeatFirst::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  deck_.reset(rng_);
  start_episode(obs);
}

void RepeatFirst::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  deck_.set_order(state.at("deck_idx").get<std::vector<int>>());
  start_episode(obs);
}

void RepeatFirst::start_episode(std::span<float> obs) {
  const int card = deck_.deal();
  target_suit_ = Deck::suit(card);
  dealt_per_suit_ = {};
  ++dealt_per_suit_[static_cast<size_t>(target_suit_)];
  obs[0] = static_cast<float>(target_suit_);
}

StepResult RepeatFirst::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (deck_.remaining() == 0) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  StepResult r;
  r.reward = a == target_suit_ ? reward_scale_ : -reward_scale_;
  // Evaluated before dealing, as upstream: the step that deals the last card terminates.
  r.terminated = deck_.remaining() == 1;
  const int suit = Deck::suit(deck_.deal());
  ++dealt_per_suit_[static_cast<size_t>(suit)];
  obs[0] = static_cast<float>(suit);
  // Upstream then discards the hand; nothing reads the hand here, so there is nothing to discard.
  return r;
}

void RepeatFirst::write_state(std::span<float> state) const {
  state[0] = static_cast<float>(target_suit_);
  // popgym computes the fractions in float64 and casts them to float32.
  const double per_suit = deck_.num_cards() / 4.0;
  for (size_t s = 0; s < dealt_per_suit_.size(); ++s)
    state[1 + s] = static_cast<float>(1.0 - dealt_per_suit_[s] / per_suit);
}

}  // namespace rlm::envs::popgym
