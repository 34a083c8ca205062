// The single-env contract: a small torch-free object that writes into buffers it is handed (STYLE principle 1).
// Batching, threads and auto-reset are VecEnv's business; an env never allocates in step(), nor in reset() except
// the Box2D tasks, which build a new physics world per episode as Gymnasium v3 does (src/envs/box2d). What only a few
// envs need (a task split, a per-instance draw) is an optional interface beside this one (envs/env_extensions.hpp).
#pragma once
#include <cstdint>
#include <span>
#include <string>

#include "envs/space.hpp"

namespace rlm::envs {

/// Named fields rather than a tuple read by position (gymnasium's 5-tuple minus obs and info).
struct StepResult {
  float reward = 0;
  bool terminated = false;  ///< the episode reached a terminal state (no bootstrapping)
  bool truncated = false;   ///< the episode was cut by its length limit (bootstrap from the final obs)
  /// Envs with a goal (reports_success()): the episode reached it. Set on the step that ends the episode.
  bool success = false;
};

class Env {
 public:
  virtual ~Env() = default;

  /// Canonical id, e.g. "popgym/RepeatFirstEasy"; wrappers return the id of the env they wrap.
  virtual const std::string& id() const = 0;
  /// Raw layout of the obs that reset() and step() write.
  virtual const Space& observation_space() const = 0;
  virtual const Space& action_space() const = 0;
  /// Every episode ends (terminated or truncated) within this many steps.
  virtual int64_t max_episode_steps() const = 0;
  /// Whether the env has a notion of success (a goal reached), reported in StepResult::success; trainers log a
  /// success rate only for such envs.
  virtual bool reports_success() const { return false; }
  /// Starts an episode: reseeds the env's own RNG with `seed` and writes the first obs.
  virtual void reset(uint64_t seed, std::span<float> obs) = 0;
  /// Applies `action` (raw layout of action_space()) and writes the next obs. Throws rlm::EnvError on an invalid
  /// action, naming the env and the action.
  virtual StepResult step(std::span<const float> action, std::span<float> obs) = 0;

  /// popgym's get_state(): the env's full state as a raw value of *state_space() (the Markovian wrapper's obs);
  /// nullptr for an env that exposes none.
  virtual const Space* state_space() const { return nullptr; }
  /// Writes the current state (raw layout of *state_space()). Only called when state_space() is not null.
  virtual void write_state(std::span<float> state) const { (void)state; }
};

/// The gymnasium spelling of a canonical id, used in messages: "popgym/RepeatFirstEasy" -> "popgym-RepeatFirstEasy-v0".
std::string gym_style_id(const std::string& canonical_id);

/// Throws rlm::EnvError "popgym-RepeatFirstEasy-v0: invalid action 7 for action space Discrete(4)".
[[noreturn]] void throw_invalid_action(const std::string& canonical_id, std::span<const float> action,
                                       const Space& action_space);

/// Throws rlm::EnvError "<id>: <what>" for a call made out of order (step before reset, step after the end).
[[noreturn]] void throw_env_misuse(const std::string& canonical_id, const char* what);

/// The integer in a Discrete(n) action, or throw_invalid_action. Inline: it runs on every step.
inline int64_t discrete_action(std::span<const float> action, const Space& action_space, const std::string& id) {
  const int64_t n = action_space.nvec[0];
  if (action.size() != 1 || !(action[0] >= 0.0f && action[0] < static_cast<float>(n))) [[unlikely]]
    throw_invalid_action(id, action, action_space);
  const auto a = static_cast<int64_t>(action[0]);
  if (static_cast<float>(a) != action[0]) [[unlikely]]  // 1.5 is not a valid Discrete action
    throw_invalid_action(id, action, action_space);
  return a;
}

}  // namespace rlm::envs
