// Visual Match (Memory-RL envs/key_to_door/visual_match.py); see visual_match.hpp.
#include "envs/memory_rl/visual_match.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::memory_rl {
namespace {

using pycolab::Art;
using pycolab::Board;
using pycolab::Cell;

constexpr Art kPassiveExplore = {
    "           ",  //
    "    ppp    ",  //
    "    p+p    ",  //
    "    ppp    ",  //
    "           ",  //
    "           ",  //
    "           ",  //
};
constexpr Art kActiveExplore = {
    "  ppppppp  ",  //
    "  p     p  ",  //
    "  p     p  ",  //
    "  pp   pp  ",  //
    "  p+++++p  ",  //
    "  p+++++p  ",  //
    "  ppppppp  ",  //
};
constexpr Art kRewardArt = {
    "###########",  //
    "# b  c  e #",  //
    "#         #",  //
    "#         #",  //
    "####   ####",  //
    "   # + #   ",  //
    "   #####   ",  //
};

constexpr char kObjects[3] = {'b', 'c', 'e'};
constexpr Cell kObjectCells[3] = {{1, 2}, {1, 5}, {1, 8}};
constexpr Cell kRewardStart{5, 5};
/// hsv_to_rgb(k/3, 1, 1) · 1000 for k = 0, 1, 2.
constexpr pycolab::Rgb kHues[3] = {pycolab::from_pycolab(1000, 0, 0), pycolab::from_pycolab(0, 1000, 0),
                                   pycolab::from_pycolab(0, 0, 1000)};

}  // namespace

VisualMatch::VisualMatch(std::string id, const VisualMatchConfig& config)
    : PycolabStory(std::move(id), config.variant, config.distractor_length, {15, 100, 10, 10.0f}, {15, 60, 15, 5.0f}),
      explore_art_(config.passive ? &kPassiveExplore : &kActiveExplore) {
  target_cells_ = pycolab::cells_of(*explore_art_, 'p');
  start_cells_ = pycolab::cells_of(*explore_art_, '+');
  seed_instance(0);
}

void VisualMatch::seed_instance(uint64_t seed) {  // the reference's Game.__init__ shuffle (see the header)
  Rng colour_rng(seed);
  std::array<int, 3> hues{0, 1, 2};
  for (size_t i = 2; i > 0; --i) std::swap(hues[i], hues[colour_rng.uniform_int(i + 1)]);
  set_colours(hues);
}

void VisualMatch::set_colours(const std::array<int, 3>& hues) {
  hues_ = hues;
  for (int i = 0; i < 3; ++i) palette_.set(kObjects[i], kHues[hues[static_cast<size_t>(i)]]);
}

void VisualMatch::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  VisualMatchEpisode e;
  e.target = static_cast<int>(rng_.uniform_int(3));
  e.target_cell = target_cells_[rng_.uniform_int(target_cells_.size())];
  e.start_cell = start_cells_[rng_.uniform_int(start_cells_.size())];
  e.apples = pycolab::DistractorPhase::draw_apples(rng_);
  start_episode(e, obs);
}

void VisualMatch::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto hues = state.at("colours").get<std::array<int, 3>>();
  for (int h : hues)
    if (h < 0 || h > 2) throw EnvError(fmt::format("{}: restore_golden: colour hue {} out of range", id_, h));
  set_colours(hues);
  VisualMatchEpisode e;
  const std::string target = state.at("target");
  const size_t t = std::string_view("bce").find(target);
  if (target.size() != 1 || t == std::string_view::npos)
    throw EnvError(fmt::format("{}: restore_golden: bad target '{}'", id_, target));
  e.target = static_cast<int>(t);
  e.target_cell = pycolab::cell_from_json(state.at("target_cell"));
  e.start_cell = pycolab::cell_from_json(state.at("start_cell"));
  e.apples = pycolab::DistractorPhase::mask_from_json(state.at("apple_cells"));
  start_episode(e, obs);
}

void VisualMatch::start_episode(const VisualMatchEpisode& episode, std::span<float> obs) {
  episode_ = episode;
  explore_impassable_[1] = kObjects[episode.target];
  begin_story(obs);
}

void VisualMatch::start_phase() {
  switch (timer_.phase) {
    case pycolab::kExplore:
      // The art's 'p' cells: the target's cell keeps the colour sprite (floor beneath), the others become walls.
      backdrop_ = Board::from_art(*explore_art_, "+");
      for (const Cell& c : target_cells_) backdrop_.set(c, c == episode_.target_cell ? ' ' : '#');
      player_ = episode_.start_cell;
      break;
    case pycolab::kDistractor:
      distractor_.start(episode_.apples, 1.0f);
      return;
    case pycolab::kReward:
      backdrop_ = Board::from_art(kRewardArt, "bce+");
      player_ = kRewardStart;
      objects_visible_ = true;
      reward_phase_return_ = 0.0f;
      break;
  }
  render();       // pycolab renders once before the frame-0 pass
  update(-1, 0);  // the frame-0 pass: nobody moves, nothing is touched
}

float VisualMatch::update(int64_t action, int frame) {
  float reward = 0.0f;
  switch (timer_.phase) {
    case pycolab::kExplore:
      pycolab::walk(player_, action, rendered_, explore_impassable_);
      break;
    case pycolab::kDistractor:
      return distractor_.update(action, frame);
    case pycolab::kReward:
      pycolab::walk(player_, action, rendered_, "#");
      for (int i = 0; i < 3 && objects_visible_; ++i)  // b, c, e in update order; the first touched hides all
        if (kObjectCells[i] == player_) {
          reward += i == episode_.target ? final_reward_ : 0.0f;
          objects_visible_ = false;
        }
      break;
  }
  render();
  return reward;
}

void VisualMatch::render() {
  rendered_ = backdrop_;
  if (timer_.phase == pycolab::kExplore) {  // z-order: the colour, the player
    rendered_.set(episode_.target_cell, kObjects[episode_.target]);
    rendered_.set(player_, '+');
  } else {  // z-order: the player, then b, c, e over it
    rendered_.set(player_, '+');
    if (objects_visible_)
      for (int i = 0; i < 3; ++i) rendered_.set(kObjectCells[i], kObjects[i]);
  }
}

}  // namespace rlm::envs::memory_rl
