#include "envs/memory_rl/pycolab_story.hpp"

#include <utility>

namespace rlm::envs::memory_rl {

PycolabStory::PycolabStory(std::string id, const std::string& variant, int distractor_length,
                           pycolab::StorySettings shm, pycolab::StorySettings original)
    : id_(std::move(id)) {
  const pycolab::StorySettings s = pycolab::story_settings(id_, variant, distractor_length, shm, original);
  timer_.lengths = {s.explore, s.distractor, s.reward};
  final_reward_ = s.final_reward;
}

void PycolabStory::begin_story(std::span<float> obs) {
  timer_.restart();
  start_phase();
  running_ = true;
  pycolab::write_view(current_board(), player(), palette_, obs);
}

const pycolab::Board& PycolabStory::current_board() const {
  return timer_.phase == pycolab::kDistractor ? distractor_.board() : rendered_;
}

pycolab::Cell PycolabStory::player() const {
  return timer_.phase == pycolab::kDistractor ? distractor_.player() : player_;
}

StepResult PycolabStory::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (!running_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  StepResult r;
  r.reward = update(a, timer_.tick());
  if (timer_.phase == pycolab::kReward) reward_phase_return_ += r.reward;
  if (timer_.phase_over()) {
    if (timer_.phase == pycolab::kReward) {
      r.terminated = true;
      r.success = reward_phase_return_ > 0.0f;
      running_ = false;
    } else {
      timer_.next_phase();
      start_phase();  // its frame-0 reward is 0
    }
  }
  pycolab::write_view(current_board(), player(), palette_, obs);
  return r;
}

}  // namespace rlm::envs::memory_rl
