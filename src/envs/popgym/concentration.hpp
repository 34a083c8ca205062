// Memory skill: remember where face-down cards lie to turn up matching pairs (the game of Concentration/Memory).
// Follows popgym/envs/concentration.py (proroklab/popgym@410d5aa, v1.0.7).
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/card_category.hpp"
#include "envs/popgym/deck.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct ConcentrationConfig {
  int num_decks = 1;                             ///< N = 52 * num_decks positions on the board
  CardCategory deck_type = CardCategory::Ranks;  ///< what must match: Colors (F = 2) or Ranks (F = 13); not Suits
};

/// The shuffled shoe lies face down, position p holding card order[p]. obs = MultiDiscrete([F+1] * N): the category
/// of every face-up or just-flipped position, F for a face-down one. Action = the position to flip; every second flip
/// closes a pair. Rewards: a matching pair of distinct face-down positions +1/(N/2) (both stay face up); a mismatch
/// or the same position twice -2/L; flipping a face-up card -(cards in play)/L, which also ends the pair. Upstream
/// semantics mirrored: the obs of a step is taken before a mismatched pair is turned back, so it still shows both
/// cards; step L is truncated (the counter is tested before it is incremented); nothing stops steps after the end
/// (upstream keeps playing, and so does this port). L = ceil(2N - N/(2N-1)).
class Concentration final : public Env, public GoldenReplayEnv {
 public:
  Concentration(std::string id, ConcentrationConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return episode_length_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// (category of every position (N), face-up mask (N, MultiBinary as MultiDiscrete([2] * N)), first and second
  /// position of the latest flips of the current or last pair, F where absent): popgym's get_state.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override;

  /// Test hook for the golden replays: start the episode from the deck order popgym recorded right after reset
  /// ({"deck_idx": [...]}, scripts/popgym_golden/concentration.py) and write the reset obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  // Hidden state and constants, for tests and debugging.
  int num_positions() const { return deck_.num_cards(); }
  /// F: the number of categories, also the obs code of a face-down position.
  int facedown_code() const { return num_categories_; }
  int category_at(int position) const { return categories_[static_cast<size_t>(position)]; }
  bool face_up(int position) const { return face_up_[static_cast<size_t>(position)] != 0; }
  int num_face_up() const { return num_face_up_; }
  /// Positions flipped in the pair now open: 0 or 1 (a pair is closed by its second flip).
  int num_in_play() const { return in_play_size_; }
  double success_reward() const { return success_reward_; }
  double failure_reward() const { return failure_reward_; }  ///< -1/L, per card in play

 private:
  void start_episode(std::span<float> obs);

  std::string id_;
  CardCategory deck_type_;
  int num_categories_;
  int64_t episode_length_;
  double success_reward_;
  double failure_reward_;
  Space observation_space_;
  Space action_space_;
  Space state_space_;
  Deck deck_;
  Rng rng_;
  std::vector<int> categories_;   // category of the card at each position, fixed per episode
  std::vector<uint8_t> face_up_;  // matched positions
  int num_face_up_ = 0;
  std::array<int, 2> in_play_{};  // the open pair's flips
  int in_play_size_ = 0;
  std::array<int, 2> last_in_play_{};  // the flips as they stood after the latest step (popgym's last_in_play_idx)
  int last_in_play_size_ = 0;
  int64_t curr_step_ = 0;
  bool started_ = false;
};

}  // namespace rlm::envs::popgym
