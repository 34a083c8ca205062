// HigherLower (memory skill: card counting); follows popgym/envs/higher_lower.py.
#include "envs/popgym/higher_lower.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::popgym {

HigherLower::HigherLower(std::string id, HigherLowerConfig config)
    : id_(std::move(id)), deck_(config.num_decks >= 1 ? config.num_decks : 1), num_decks_(config.num_decks) {
  if (config.num_decks < 1) throw EnvError(fmt::format("{}: num_decks must be >= 1, got {}", id_, config.num_decks));
  reward_scale_ = static_cast<float>(1.0 / deck_.num_cards());  // upstream's 1/N (see the header)
}

void HigherLower::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  deck_.reset(rng_);
  start_episode(obs);
}

void HigherLower::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  deck_.set_order(state.at("deck_idx").get<std::vector<int>>());
  start_episode(obs);
}

void HigherLower::start_episode(std::span<float> obs) {
  current_rank_ = Deck::rank(deck_.deal());
  seen_per_rank_ = {};
  seen_per_rank_[static_cast<size_t>(current_rank_)] = 1;
  obs[0] = static_cast<float>(current_rank_);
}

StepResult HigherLower::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (deck_.remaining() == 0) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  StepResult r;
  r.terminated = deck_.remaining() <= 1;  // before dealing, as upstream
  const int next = Deck::rank(deck_.deal());
  ++seen_per_rank_[static_cast<size_t>(next)];
  if (next != current_rank_) r.reward = (next > current_rank_) == (a == kHigher) ? reward_scale_ : -reward_scale_;
  current_rank_ = next;
  obs[0] = static_cast<float>(next);
  return r;
}

void HigherLower::write_state(std::span<float> state) const {
  // popgym: uint8 counts / 4 / num_decks in float64, then cast to float32.
  for (size_t i = 0; i < kNumRanks; ++i)
    state[i] = static_cast<float>(static_cast<double>(seen_per_rank_[i]) / 4 / num_decks_);
}

}  // namespace rlm::envs::popgym
