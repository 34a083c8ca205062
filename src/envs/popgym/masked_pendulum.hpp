// Pendulum with theta_dot hidden: the one implementation behind PositionOnlyPendulum and NoisyPositionOnlyPendulum,
// which upstream are two copies of one env that differ only in whether noise is added
// (proroklab/popgym@410d5aa:popgym/envs/position_only_pendulum.py, noisy_position_only_pendulum.py). popgym has no
// velocity-only Pendulum, so unlike MaskedCartPole the observed half is fixed. The physics is gymnasium's
// (pendulum_physics.hpp), the noise popgym's (observation_noise.hpp).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/observation_noise.hpp"
#include "envs/popgym/pendulum_physics.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

struct MaskedPendulumConfig {
  /// Standard deviation of the Gaussian noise on each obs component, drawn at reset and after every step and clipped
  /// to [-1, 1]. Unset rather than 0 turns the noise off, so that noise-free envs draw nothing beyond the reset state.
  std::optional<double> noise_sigma = {};
  int max_episode_length = 200;  ///< L: truncated at step L, never terminated
};

/// obs = [cos theta, sin theta] as float32 in Box([-1, -1], [1, 1]), plus noise if configured; rewards use the true
/// state. Action Box(-2, 2, (1,)) torque, clipped to [-2, 2] as gymnasium does (only a wrong size or NaN is invalid);
/// reward in [-1/L, 1/L] per step, about +1/L while the pole is held upright. The families are final subclasses that
/// fix the config (position_only_pendulum.hpp, noisy_position_only_pendulum.hpp) rather than aliases, so that each
/// keeps its own Config defaults and the registry's instances carry the family's type, which the tests dynamic_cast to.
class MaskedPendulum : public Env, public GoldenReplayEnv {
 public:
  MaskedPendulum(std::string id, MaskedPendulumConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return sim_.max_episode_length(); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;
  /// gymnasium Pendulum's Box([-1, -1, -8], [1, 1, 8]); the state is the noise-free [cos theta, sin theta,
  /// theta_dot] as float32.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override { sim_.write_state(state); }

  /// Test hook for the golden replays: start the episode from the float64 state popgym drew at reset ({"state":
  /// [theta, theta_dot]}, and with noise "noise": [n_cos, n_sin], the reset noise; see scripts/popgym_golden/
  /// position_only_pendulum.py and noisy_position_only_pendulum.py) and write the reset obs. Without noise a "noise"
  /// entry is ignored.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;
  /// Test hook: the next step() adds exactly these two noise values (numpy's normal(0, sigma) outputs) to the obs. A
  /// noise-free step draws nothing, so it takes only an empty list (the golden replays pass one for every step).
  void inject_draws(std::span<const double> draws) override;

  double theta() const { return sim_.theta(); }
  double theta_dot() const { return sim_.theta_dot(); }
  int steps() const { return sim_.steps(); }
  double noise_sigma() const { return noise_ ? noise_->sigma() : 0.0; }

 private:
  void write_obs(std::span<float> obs);

  std::string id_;
  Space observation_space_ = Space::box({-1.0f, -1.0f}, {1.0f, 1.0f});
  Space action_space_ = PendulumSim::action_space();
  Space state_space_ = PendulumSim::state_space();
  PendulumSim sim_;
  std::optional<ObservationNoise> noise_;
  Rng rng_;
};

}  // namespace rlm::envs::popgym
