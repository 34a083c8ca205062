// Autoencode (memory skill: recite a sequence backwards); follows popgym/envs/autoencode.py.
#include "envs/popgym/autoencode.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::popgym {

Autoencode::Autoencode(std::string id, AutoencodeConfig config)
    : id_(std::move(id)), deck_(config.num_decks >= 1 ? config.num_decks : 1) {
  if (config.num_decks < 1) throw EnvError(fmt::format("{}: num_decks must be >= 1, got {}", id_, config.num_decks));
  const int n = deck_.num_cards();
  state_space_ = Space::tuple({Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(n), Deck::kNumSuits)),
                               Space::discrete(2), Space::box({0.0f}, {1.0f})});
  // Only the N play steps are scored, so a perfect recital returns exactly +1.
  reward_scale_ = static_cast<float>(1.0 / n);
}

void Autoencode::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  deck_.reset(rng_);
  start_episode(obs);
}

void Autoencode::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  deck_.set_order(state.at("deck_idx").get<std::vector<int>>());
  start_episode(obs);
}

void Autoencode::start_episode(std::span<float> obs) {
  const int card = deck_.deal();
  hand_size_ = 1;
  mode_ = kWatch;
  obs[0] = static_cast<float>(mode_);
  obs[1] = static_cast<float>(Deck::suit(card));
}

StepResult Autoencode::step(std::span<const float> action, std::span<float> obs) {
  // Upstream compares the action with the card in both modes (and ignores it while watching), so any action outside
  // Discrete(4) is invalid in both.
  const int64_t a = discrete_action(action, action_space_, id_);
  if (hand_size_ == 0) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  StepResult r;
  if (mode_ == kWatch) {
    const int card = deck_.deal();
    ++hand_size_;
    // The switch happens before the obs is made, so the last card shown already carries mode PLAY.
    if (deck_.remaining() == 0) mode_ = kPlay;
    obs[0] = static_cast<float>(mode_);
    obs[1] = static_cast<float>(Deck::suit(card));
  } else {
    r.terminated = hand_size_ == 1;  // checked before popping, as upstream
    r.reward = a == Deck::suit(card_on_top()) ? reward_scale_ : -reward_scale_;
    --hand_size_;
    obs[0] = static_cast<float>(kPlay);
    obs[1] = static_cast<float>(Deck::suit(0));  // upstream shows card id 0 on every play step
  }
  return r;
}

void Autoencode::write_state(std::span<float> state) const {
  const std::span<const int> order = deck_.order();
  for (size_t i = 0; i < order.size(); ++i) state[i] = static_cast<float>(Deck::suit(order[i]));
  state[order.size()] = static_cast<float>(mode_);
  // float64 division, then popgym's float32 cast.
  state[order.size() + 1] = static_cast<float>(static_cast<double>(hand_size_) / deck_.num_cards());
}

}  // namespace rlm::envs::popgym
