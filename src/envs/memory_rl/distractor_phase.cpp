// The apple-collecting distractor phase; see distractor_phase.hpp.
#include "envs/memory_rl/distractor_phase.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::memory_rl::pycolab {
namespace {

constexpr Art kArt = {
    "###########",  //
    "#a a a a a#",  //
    "# a a a a #",  //
    "#a a a a a#",  //
    "# a a a a #",  //
    "#a a + a a#",  //
    "###########",  //
};

}  // namespace

const std::array<Cell, DistractorPhase::kCandidates>& DistractorPhase::candidates() {
  static const std::array<Cell, kCandidates> cells = [] {
    std::array<Cell, kCandidates> out;
    const std::vector<Cell> found = cells_of(kArt, 'a');
    for (size_t i = 0; i < out.size(); ++i) out[i] = found.at(i);
    return out;
  }();
  return cells;
}

int DistractorPhase::candidate_index(Cell c) {
  const auto& all = candidates();
  for (int i = 0; i < kCandidates; ++i)
    if (all[static_cast<size_t>(i)] == c) return i;
  throw EnvError(fmt::format("distractor phase: ({}, {}) is not an apple cell", c.row, c.col));
}

uint32_t DistractorPhase::draw_apples(Rng& rng) {
  std::array<int, kCandidates> order;
  for (int i = 0; i < kCandidates; ++i) order[static_cast<size_t>(i)] = i;
  uint32_t mask = 0;
  for (int i = 0; i < kApples; ++i) {
    const auto j = static_cast<size_t>(i) + rng.uniform_int(static_cast<uint64_t>(kCandidates - i));
    std::swap(order[static_cast<size_t>(i)], order[j]);
    mask |= uint32_t{1} << order[static_cast<size_t>(i)];
  }
  return mask;
}

Board DistractorPhase::make_backdrop() { return Board::from_art(kArt, "a+"); }

void DistractorPhase::start(uint32_t apple_mask, float apple_reward) {
  player_ = kStart;
  apple_reward_ = apple_reward;
  for (int i = 0; i < kCandidates; ++i) {
    apple_[static_cast<size_t>(i)] = (apple_mask >> i) & 1u;
    last_pickup_[static_cast<size_t>(i)] = -1;
  }
  render();       // pycolab renders once before the frame-0 pass
  update(-1, 0);  // nobody moves; no apple lies under the start
}

float DistractorPhase::update(int64_t action, int frame) {
  walk(player_, action, rendered_, "#");
  float reward = 0.0f;
  const auto& cells = candidates();
  for (size_t i = 0; i < cells.size(); ++i) {
    if (apple_[i] && cells[i] == player_) {
      apple_[i] = false;
      last_pickup_[i] = frame;
      reward += apple_reward_;
    }
  }
  for (size_t i = 0; i < cells.size(); ++i)
    if (last_pickup_[i] >= 0 && frame > last_pickup_[i] + kRespawnEvery) apple_[i] = true;
  render();
  return reward;
}

void DistractorPhase::render() {
  rendered_ = backdrop_;
  const auto& cells = candidates();
  for (size_t i = 0; i < cells.size(); ++i)
    if (apple_[i]) rendered_.set(cells[i], 'a');
  rendered_.set(player_, '+');
}

int DistractorPhase::apples_left() const {
  int n = 0;
  for (bool a : apple_) n += a ? 1 : 0;
  return n;
}

}  // namespace rlm::envs::memory_rl::pycolab
