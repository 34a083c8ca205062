// What Visual Match and Key-to-Door share: a pycolab Story of three phases (story_timer.hpp) seen through the 5×5 view
// (pycolab_view.hpp), the distractor phase between (distractor_phase.hpp), and the step that runs one frame, ends a
// phase on the timer (returning the next phase's frame-0 obs) and ends the episode after the reward phase, with success
// = that phase paid more than 0 (the reference's info["success"]). A task supplies its explore and reward phases:
// start_phase() builds the timer's current phase and runs its frame-0 pass, update() runs one frame of it.
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "envs/env.hpp"
#include "envs/memory_rl/distractor_phase.hpp"
#include "envs/memory_rl/pycolab_board.hpp"
#include "envs/memory_rl/pycolab_view.hpp"
#include "envs/memory_rl/story_settings.hpp"
#include "envs/memory_rl/story_timer.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::memory_rl {

class PycolabStory : public Env {
 public:
  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return timer_.total(); }
  bool reports_success() const override { return true; }
  StepResult step(std::span<const float> action, std::span<float> obs) final;

  const pycolab::StoryTimer& timer() const { return timer_; }
  pycolab::Cell player() const;
  float final_reward() const { return final_reward_; }

 protected:
  /// Phase lengths and final reward of `variant` (the task's shm and original rows; story_settings.hpp).
  PycolabStory(std::string id, const std::string& variant, int distractor_length, pycolab::StorySettings shm,
               pycolab::StorySettings original);

  /// Starts the story at the explore phase (the task has set its episode's draws) and writes the first obs.
  void begin_story(std::span<float> obs);
  /// Builds the timer's current phase and runs its frame-0 pass (the distractor phase: distractor_.start).
  virtual void start_phase() = 0;
  /// One frame of the current phase (action < 0: none); returns its reward.
  virtual float update(int64_t action, int frame) = 0;

  std::string id_;
  Space observation_space_ = Space::image(3, pycolab::kViewSize, pycolab::kViewSize);
  Space action_space_ = Space::discrete(4);
  Rng rng_;
  float final_reward_;
  pycolab::StoryTimer timer_;
  pycolab::Palette palette_;
  pycolab::Board backdrop_, rendered_;  // explore / reward phase: its backdrop and its last render
  pycolab::Cell player_;                // explore / reward phase
  pycolab::DistractorPhase distractor_;
  float reward_phase_return_ = 0.0f;

 private:
  const pycolab::Board& current_board() const;

  bool running_ = false;
};

}  // namespace rlm::envs::memory_rl
