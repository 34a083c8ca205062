// Key-to-Door (Memory-RL envs/key_to_door/key_to_door.py); see key_to_door.hpp.
#include "envs/memory_rl/key_to_door.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::memory_rl {
namespace {

using pycolab::Art;
using pycolab::Board;
using pycolab::Cell;

constexpr Art kExploreArt = {
    "  #######  ",  //
    "  #kkkkk#  ",  //
    "  #kkkkk#  ",  //
    "  ##   ##  ",  //
    "  #+++++#  ",  //
    "  #+++++#  ",  //
    "  #######  ",  //
};
constexpr Art kRewardArt = {
    // REWARD_GRID_SR
    "           ",  //
    "   ##d##   ",  //
    "   #   #   ",  //
    "   # + #   ",  //
    "   #   #   ",  //
    "   #####   ",  //
    "           ",  //
};

}  // namespace

KeyToDoor::KeyToDoor(std::string id, const KeyToDoorConfig& config)
    : PycolabStory(std::move(id), config.variant, config.distractor_length, {10, 100, 3, 10.0f}, {15, 60, 10, 5.0f}) {
  key_cells_ = pycolab::cells_of(kExploreArt, 'k');
  start_cells_ = pycolab::cells_of(kExploreArt, '+');
  palette_.set('i', pycolab::from_pycolab(1000, 1000, 1000));  // the indicator: white
}

void KeyToDoor::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  KeyToDoorEpisode e;
  e.key_cell = key_cells_[rng_.uniform_int(key_cells_.size())];
  e.start_cell = start_cells_[rng_.uniform_int(start_cells_.size())];
  e.apples = pycolab::DistractorPhase::draw_apples(rng_);
  start_episode(e, obs);
}

void KeyToDoor::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  KeyToDoorEpisode e;
  e.key_cell = pycolab::cell_from_json(state.at("key_cell"));
  e.start_cell = pycolab::cell_from_json(state.at("start_cell"));
  e.apples = pycolab::DistractorPhase::mask_from_json(state.at("apple_cells"));
  start_episode(e, obs);
}

void KeyToDoor::start_episode(const KeyToDoorEpisode& episode, std::span<float> obs) {
  episode_ = episode;
  has_key_ = false;  // a new Story: a new Plot
  begin_story(obs);
}

void KeyToDoor::start_phase() {
  door_open_ = false;  // every phase builds a new player sprite
  switch (timer_.phase) {
    case pycolab::kExplore:
      backdrop_ = Board::from_art(kExploreArt, "k+");
      player_ = episode_.start_cell;
      key_visible_ = true;
      indicator_visible_ = false;
      pickup_frame_ = 0;
      break;
    case pycolab::kDistractor:
      distractor_.start(episode_.apples, 1.0f);
      return;
    case pycolab::kReward:
      backdrop_ = Board::from_art(kRewardArt, "d+");
      player_ = kRewardStart;
      reward_phase_return_ = 0.0f;
      break;
  }
  render();       // pycolab renders once before the frame-0 pass
  update(-1, 0);  // the frame-0 pass: nobody moves; the reward room's player drops 'd' if the key is held
}

void KeyToDoor::move_player(int64_t action) {
  if (!door_open_ && has_key_) door_open_ = true;
  pycolab::walk(player_, action, rendered_, door_open_ ? "#i" : "#id");
}

float KeyToDoor::update(int64_t action, int frame) {
  float reward = 0.0f;
  switch (timer_.phase) {
    case pycolab::kExplore:
      move_player(action);
      if (key_visible_ && player_ == episode_.key_cell) {  // the key sprite
        has_key_ = true;
        key_visible_ = false;
      }
      if (pickup_frame_ > 0) indicator_visible_ = false;  // the indicator sprite: one frame only
      if (player_ == episode_.key_cell && pickup_frame_ == 0) {
        indicator_visible_ = true;
        pickup_frame_ = frame;
      }
      break;
    case pycolab::kDistractor:  // no key, indicator or door on this board: only walls block
      return distractor_.update(action, frame);
    case pycolab::kReward:
      move_player(action);
      if (player_ == kDoorCell && has_key_) {  // the door sprite
        reward += final_reward_;
        has_key_ = false;
      }
      break;
  }
  render();
  return reward;
}

void KeyToDoor::render() {
  rendered_ = backdrop_;
  if (timer_.phase == pycolab::kExplore) {  // z-order: key, indicator, player
    if (key_visible_) rendered_.set(episode_.key_cell, 'k');
    if (indicator_visible_) rendered_.set(kIndicatorCell, 'i');
    rendered_.set(player_, '+');
  } else {  // z-order: player, door over it
    rendered_.set(player_, '+');
    rendered_.set(kDoorCell, 'd');
  }
}

}  // namespace rlm::envs::memory_rl
