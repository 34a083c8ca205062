// Concentration (memory skill: remember the positions of face-down cards); follows popgym/envs/concentration.py.
#include "envs/popgym/concentration.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace rlm::envs::popgym {

Concentration::Concentration(std::string id, ConcentrationConfig config)
    : id_(std::move(id)),
      deck_type_(config.deck_type),
      num_categories_(num_categories(config.deck_type)),
      deck_(config.num_decks >= 1 ? config.num_decks : 1) {
  if (config.num_decks < 1) throw EnvError(fmt::format("{}: num_decks must be >= 1, got {}", id_, config.num_decks));
  // 13 cards per suit cannot all be paired, so upstream offers only colours and ranks.
  if (deck_type_ == CardCategory::Suits) throw EnvError(fmt::format("{}: deck_type must be colors or ranks", id_));
  const int n = deck_.num_cards();
  // The expected number of flips a perfect-memory player needs (upstream's formula, evaluated in float64).
  episode_length_ = static_cast<int64_t>(std::ceil(2.0 * n - static_cast<double>(n) / (2 * n - 1)));
  success_reward_ = 1.0 / (n / 2);  // NOLINT(bugprone-integer-division): upstream divides by num_cards // 2
  failure_reward_ = -1.0 / static_cast<double>(episode_length_);
  const auto f = static_cast<int64_t>(num_categories_);
  observation_space_ = Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(n), f + 1));
  action_space_ = Space::discrete(n);
  state_space_ = Space::tuple({Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(n), f)),
                               Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(n), 2)),
                               Space::discrete(n), Space::discrete(n)});
  categories_.resize(static_cast<size_t>(n));
  face_up_.resize(static_cast<size_t>(n));
}

void Concentration::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  deck_.reset(rng_);
  start_episode(obs);
}

void Concentration::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  deck_.set_order(state.at("deck_idx").get<std::vector<int>>());
  start_episode(obs);
}

void Concentration::start_episode(std::span<float> obs) {
  const std::span<const int> order = deck_.order();
  for (size_t p = 0; p < order.size(); ++p) categories_[p] = card_category(deck_type_, order[p]);
  std::fill(face_up_.begin(), face_up_.end(), uint8_t{0});
  num_face_up_ = 0;
  in_play_size_ = 0;
  last_in_play_size_ = 0;
  curr_step_ = 0;
  started_ = true;
  std::fill(obs.begin(), obs.begin() + static_cast<std::ptrdiff_t>(order.size()), static_cast<float>(num_categories_));
}

StepResult Concentration::step(std::span<const float> action, std::span<float> obs) {
  const auto a = static_cast<int>(discrete_action(action, action_space_, id_));
  if (!started_) [[unlikely]]
    throw_env_misuse(id_, "step() called before the first reset()");
  StepResult r;
  r.truncated = curr_step_ >= episode_length_ - 1;  // the counter before this step's increment
  in_play_[static_cast<size_t>(in_play_size_++)] = a;

  // The obs shows the face-up cards and both flips of the pair, before a mismatch is turned back.
  const auto n = static_cast<size_t>(deck_.num_cards());
  for (size_t p = 0; p < n; ++p) obs[p] = static_cast<float>(face_up_[p] ? categories_[p] : num_categories_);
  for (int i = 0; i < in_play_size_; ++i) {
    const auto p = static_cast<size_t>(in_play_[static_cast<size_t>(i)]);
    obs[p] = static_cast<float>(categories_[p]);
  }
  last_in_play_ = in_play_;
  last_in_play_size_ = in_play_size_;

  bool touches_face_up = false;
  for (int i = 0; i < in_play_size_; ++i)
    touches_face_up |= face_up_[static_cast<size_t>(in_play_[static_cast<size_t>(i)])] != 0;
  if (touches_face_up) {
    r.reward = static_cast<float>(failure_reward_ * in_play_size_);
    in_play_size_ = 0;
  } else if (in_play_size_ == 2) {
    const int p = in_play_[0], q = in_play_[1];
    if (p != q && categories_[static_cast<size_t>(p)] == categories_[static_cast<size_t>(q)]) {
      r.reward = static_cast<float>(success_reward_);
      face_up_[static_cast<size_t>(p)] = face_up_[static_cast<size_t>(q)] = 1;
      num_face_up_ += 2;
      r.terminated = num_face_up_ == deck_.num_cards();
    } else {
      r.reward = static_cast<float>(2 * failure_reward_);
    }
    in_play_size_ = 0;
  }
  ++curr_step_;
  return r;
}

void Concentration::write_state(std::span<float> state) const {
  const auto n = static_cast<size_t>(deck_.num_cards());
  for (size_t p = 0; p < n; ++p) {
    state[p] = static_cast<float>(categories_[p]);
    state[n + p] = static_cast<float>(face_up_[p]);
  }
  // popgym defaults both to the face-down code F (which is also a valid position; upstream's ambiguity).
  state[2 * n] = static_cast<float>(last_in_play_size_ >= 1 ? last_in_play_[0] : num_categories_);
  state[2 * n + 1] = static_cast<float>(last_in_play_size_ == 2 ? last_in_play_[1] : num_categories_);
}

}  // namespace rlm::envs::popgym
