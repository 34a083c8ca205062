// Memory skill: store a whole sequence and recite it backwards (a stack). Follows popgym/envs/autoencode.py
// (proroklab/popgym@410d5aa, v1.0.7).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/deck.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct AutoencodeConfig {
  int num_decks = 1;  ///< N = 52 * num_decks cards; the episode is N-1 watch steps and N play steps
};

/// obs = (mode, suit) with mode WATCH = 1, PLAY = 0 (upstream's values). Watch: every card of the shoe is shown once,
/// the action is ignored and the reward is 0; the last card already comes with mode 0. Play: the agent names the
/// suits in reverse order of observation, +-1/N each, and the obs is always (0, 0) (upstream renders card id 0).
class Autoencode final : public Env, public GoldenReplayEnv {
 public:
  static constexpr int kPlay = 0;
  static constexpr int kWatch = 1;

  Autoencode(std::string id, AutoencodeConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return 2 * static_cast<int64_t>(deck_.num_cards()) - 1; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// (suits of the whole shuffled order (N), mode, hand size / N): popgym's get_state.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode from the deck order popgym recorded right after reset
  /// ({"deck_idx": [...]}, scripts/popgym_golden/autoencode.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  // Hidden state, for tests and debugging.
  int mode() const { return mode_; }
  /// Cards shown and not yet recited (upstream's len(deck["system"])).
  int hand_size() const { return hand_size_; }
  /// The suit the next play step scores against (the top of the stack); -1 while watching or when the stack is empty.
  int next_recital_suit() const { return mode_ == kPlay && hand_size_ > 0 ? Deck::suit(card_on_top()) : -1; }
  const Deck& deck() const { return deck_; }

 private:
  void start_episode(std::span<float> obs);
  // The hand holds the dealt cards in dealing order, i.e. order[N-1], order[N-2], ..., so its top is order[N-h].
  int card_on_top() const { return deck_.order()[static_cast<size_t>(deck_.num_cards() - hand_size_)]; }

  std::string id_;
  Space observation_space_ = Space::tuple({Space::discrete(2), Space::discrete(Deck::kNumSuits)});
  Space action_space_ = Space::discrete(Deck::kNumSuits);
  Space state_space_;
  Deck deck_;
  Rng rng_;
  float reward_scale_;
  int mode_ = kWatch;
  int hand_size_ = 0;  // 0 before the first reset: step() refuses to run
};

}  // namespace rlm::envs::popgym
