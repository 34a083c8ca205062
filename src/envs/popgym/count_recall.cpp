// CountRecall (memory skill: order-agnostic counting); follows popgym/envs/count_recall.py.
#include "envs/popgym/count_recall.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::popgym {

CountRecall::CountRecall(std::string id, CountRecallConfig config)
    : id_(std::move(id)),
      deck_type_(config.deck_type),
      num_categories_(popgym::num_categories(config.deck_type)),
      value_deck_(config.num_decks >= 1 ? config.num_decks : 1),
      query_deck_(config.num_decks >= 1 ? config.num_decks : 1) {
  if (config.num_decks < 1) throw EnvError(fmt::format("{}: num_decks must be >= 1, got {}", id_, config.num_decks));
  const int n = value_deck_.num_cards();
  max_card_count_ = n / num_categories_;  // exact: every category has the same number of cards
  const auto d = static_cast<int64_t>(num_categories_);
  observation_space_ = Space::multi_discrete({d, d});
  // The answer ranges over 0..M; the legacy space Discrete(M) leaves out M.
  action_space_ = Space::discrete(config.legacy_action_space ? max_card_count_ : max_card_count_ + 1);
  const std::vector<float> zeros(static_cast<size_t>(d), 0.0f), ones(static_cast<size_t>(d), 1.0f);
  state_space_ = Space::tuple({Space::box(zeros, ones), Space::box(zeros, ones), observation_space_});
  reward_scale_ = static_cast<float>(1.0 / (n - 1));
}

void CountRecall::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  // One engine for both decks, value deck first, as upstream.
  value_deck_.reset(rng_);
  query_deck_.reset(rng_);
  start_episode(obs);
}

void CountRecall::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  value_deck_.set_order(state.at("value_idx").get<std::vector<int>>());
  query_deck_.set_order(state.at("query_idx").get<std::vector<int>>());
  start_episode(obs);
}

void CountRecall::start_episode(std::span<float> obs) {
  counts_ = {};
  query_counts_ = {};
  deal(obs);
}

void CountRecall::deal(std::span<float> obs) {
  value_ = card_category(deck_type_, value_deck_.deal());
  query_ = card_category(deck_type_, query_deck_.deal());
  ++counts_[static_cast<size_t>(value_)];
  ++query_counts_[static_cast<size_t>(query_)];
  obs[0] = static_cast<float>(value_);
  obs[1] = static_cast<float>(query_);
}

StepResult CountRecall::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (value_deck_.remaining() == 0) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  // The target is read before dealing: it counts the value card dealt alongside the query, not the new one.
  const int target = counts_[static_cast<size_t>(query_)];
  deal(obs);
  StepResult r;
  r.reward = a == target ? reward_scale_ : -reward_scale_;
  r.terminated = value_deck_.remaining() == 0;
  return r;
}

void CountRecall::write_state(std::span<float> state) const {
  const auto d = static_cast<size_t>(num_categories_);
  // float64 division, then popgym's float32 cast.
  for (size_t i = 0; i < d; ++i) {
    state[i] = static_cast<float>(static_cast<double>(counts_[i]) / max_card_count_);
    state[d + i] = static_cast<float>(static_cast<double>(query_counts_[i]) / max_card_count_);
  }
  state[2 * d] = static_cast<float>(value_);
  state[2 * d + 1] = static_cast<float>(query_);
}

}  // namespace rlm::envs::popgym
