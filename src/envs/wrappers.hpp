// Wrappers of proroklab/popgym@410d5aa:popgym/wrappers/, as Env decorators. The POPGym paper feeds PPO with
// Flatten(Antialias(PreviousAction(env))): the obs tuple (env obs..., previous action, is_t0), one-hot encoded;
// memory-monoids adds DiscreteAction on top. Markovian exposes the env's hidden state (popgym's get_state()).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "envs/env.hpp"

namespace rlm::envs {

/// Shared plumbing: forwards id, action space and episode length to the wrapped env.
class Wrapper : public Env {
 public:
  explicit Wrapper(std::unique_ptr<Env> inner);
  const std::string& id() const override { return inner_->id(); }
  const Space& action_space() const override { return inner_->action_space(); }
  int64_t max_episode_steps() const override { return inner_->max_episode_steps(); }
  bool reports_success() const override { return inner_->reports_success(); }
  /// The wrapped env's state, as popgym's POPGymWrapper forwards state_space and get_state().
  const Space* state_space() const override { return inner_->state_space(); }
  void write_state(std::span<float> state) const override { inner_->write_state(state); }
  const Env& inner() const { return *inner_; }
  Env& inner() { return *inner_; }

 protected:
  std::unique_ptr<Env> inner_;
};

/// obs -> Tuple(obs parts..., action_space): appends the action that produced the obs, since some envs' obs do not
/// say which action was taken. At reset the "null action" is written: 0 for discrete parts, 0 clamped into the
/// bounds for Box parts (gymnasium uses low when 0 is outside the Box).
class PreviousAction final : public Wrapper {
 public:
  explicit PreviousAction(std::unique_ptr<Env> inner);
  const Space& observation_space() const override { return observation_space_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

 private:
  Space observation_space_;
  std::vector<float> null_action_;
  size_t inner_size_;  // the inner obs is a prefix of ours, so the inner env writes straight into our buffer
};

/// obs -> Tuple(obs parts..., Discrete(2)): appends is_t0, 1 on the reset obs and 0 after every step, so a policy
/// can tell a genuine first step from a zero-padded one.
class Antialias final : public Wrapper {
 public:
  explicit Antialias(std::unique_ptr<Env> inner);
  const Space& observation_space() const override { return observation_space_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

 private:
  Space observation_space_;
  size_t inner_size_;
};

/// obs -> Box(encoded_size): gymnasium flatten of the whole obs (one-hot for Discrete/MultiDiscrete parts, Box parts
/// copied, Tuple parts concatenated in order). The action space is left as it is.
class Flatten final : public Wrapper {
 public:
  explicit Flatten(std::unique_ptr<Env> inner);
  const Space& observation_space() const override { return observation_space_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// One leaf block of the encoding, precomputed so that a step is a flat loop (Space::encode would walk the tuple
  /// tree and recompute its sizes on every call).
  struct Block {
    int64_t size;  ///< floats written: n for a one-hot block, 1 for a copied Box component
    bool one_hot;
  };

 private:
  void encode(std::span<float> out) const;

  Space observation_space_;
  std::vector<Block> blocks_;  // one per raw float, in raw order
  std::vector<float> raw_;     // the inner env's raw obs, preallocated
};

/// popgym's Observability levels that change the obs (FULL_IN_INFO_DICT has no equivalent: there is no info dict).
enum class Observability {
  kPartial,         ///< the obs is unchanged
  kFull,            ///< obs = the env's state (raw layout of *state_space())
  kFullAndPartial,  ///< obs = Tuple(obs, state): popgym's Dict {"obs", "state"}, whose keys sort in this order
};

/// "partial", "full" or "full_and_partial" (popgym's names, lower case); anything else throws rlm::EnvError.
Observability parse_observability(const std::string& level);

/// Exposes the env's hidden Markov state through the obs (popgym's Markovian). The state space is the wrapped env's
/// state_space(); an env that has none is an rlm::EnvError at construction for the levels that need it.
class Markovian final : public Wrapper {
 public:
  Markovian(std::unique_ptr<Env> inner, Observability level);
  const Space& observation_space() const override { return observation_space_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;
  Observability level() const { return level_; }

 private:
  void write_obs_state(std::span<float> obs) const;

  Observability level_;
  Space observation_space_;
  size_t inner_size_;             // floats of the inner obs at the front of ours (0 for kFull)
  std::vector<float> inner_obs_;  // kFull: the inner obs is not part of ours, so it is written here
};

/// MultiDiscrete(nvec) action -> Discrete(prod nvec), decoded row-major as numpy's unravel_index (the last component
/// varies fastest: for a board action [row, col], a = row * cols + col). A Discrete action space is left as it is;
/// any other is an rlm::EnvError at construction, as is a product above 2^24 (not exact in a float action).
class DiscreteAction final : public Wrapper {
 public:
  explicit DiscreteAction(std::unique_ptr<Env> inner);
  const Space& observation_space() const override { return inner_->observation_space(); }
  const Space& action_space() const override { return action_space_; }
  void reset(uint64_t seed, std::span<float> obs) override { inner_->reset(seed, obs); }
  StepResult step(std::span<const float> action, std::span<float> obs) override;

 private:
  Space action_space_;
  bool ravel_;                  // false: the inner action space is already Discrete
  std::vector<float> decoded_;  // the inner MultiDiscrete action, preallocated
};

}  // namespace rlm::envs
