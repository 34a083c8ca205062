// CartPole with half of its state hidden: the one implementation behind PositionOnlyCartPole, VelocityOnlyCartPole and
// NoisyPositionOnlyCartPole. Upstream these are three copies of one env that differ only in which state indices the
// obs holds and whether noise is added (proroklab/popgym@410d5aa:popgym/envs/position_only_cartpole.py,
// velocity_only_cartpole.py, noisy_position_only_cartpole.py), so here they differ only in a MaskedCartPoleConfig.
// The physics is gymnasium's (cartpole_physics.hpp), the noise popgym's (observation_noise.hpp).
#pragma once
#include <array>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/popgym/cartpole_physics.hpp"
#include "envs/popgym/observation_noise.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

/// Which half of the state [x, x_dot, theta, theta_dot] the obs holds.
enum class CartPoleObs {
  kPositions,   ///< [x, theta] in +-[4.8, 0.41887903]: twice the termination thresholds, as upstream
  kVelocities,  ///< [x_dot, theta_dot] in Box(-inf, inf)
};

struct MaskedCartPoleConfig {
  CartPoleObs observe = CartPoleObs::kPositions;
  /// Standard deviation of the Gaussian noise on each obs component, drawn at reset and after every step and clipped
  /// to the obs Box. Unset rather than 0 turns the noise off, so that noise-free envs draw nothing beyond the reset
  /// state and keep upstream's RNG stream and unclipped obs.
  std::optional<double> noise_sigma = {};
  int max_episode_length = 200;  ///< L: truncated at step L; every surviving step pays 1/L
  /// VelocityOnlyCartpole's upstream quirk: its reset() returns [x, theta] (copied from PositionOnlyCartPole) while
  /// every step returns `observe`.
  bool reset_obs_positions = false;
};

/// obs = the observed half of the state as float32, plus noise if configured; rewards and termination use the true
/// state. Action Discrete(2): 1 pushes right with +10 N, 0 left with -10 N. The families are final subclasses that fix
/// the config (position_only_cartpole.hpp etc.) rather than aliases, so that each keeps its own Config defaults and
/// the registry's instances carry the family's type, which the tests dynamic_cast to.
class MaskedCartPole : public Env, public GoldenReplayEnv {
 public:
  MaskedCartPole(std::string id, MaskedCartPoleConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return sim_.max_episode_length(); }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;
  /// gymnasium CartPole's Box(+-[4.8, inf, 0.41887903, inf]); the state is the noise-free [x, x_dot, theta,
  /// theta_dot] as float32.
  const Space* state_space() const override { return &state_space_; }
  void write_state(std::span<float> state) const override { sim_.write_state(state); }

  /// Test hook for the golden replays: start the episode from the float64 state popgym drew at reset ({"state": [x,
  /// x_dot, theta, theta_dot]}, and with noise "noise": [n0, n1], the reset noise; see scripts/popgym_golden/
  /// position_only_cart_pole.py, velocity_only_cartpole.py and noisy_position_only_cart_pole.py) and write the reset
  /// obs. Without noise a "noise" entry is ignored.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;
  /// Test hook: the next step() adds exactly these two noise values (numpy's normal(0, sigma) outputs) to the obs. A
  /// noise-free step draws nothing, so it takes only an empty list (the golden replays pass one for every step).
  void inject_draws(std::span<const double> draws) override;

  /// The full float64 state [x, x_dot, theta, theta_dot] (popgym's get_state, before its float32 cast).
  const std::array<double, 4>& state() const { return sim_.state(); }
  int steps() const { return sim_.steps(); }
  double noise_sigma() const { return noise_ ? noise_->sigma() : 0.0; }

 private:
  void write_obs(CartPoleObs half, std::span<float> obs);

  std::string id_;
  CartPoleObs observe_;
  CartPoleObs reset_observe_;
  Space observation_space_;
  Space action_space_ = Space::discrete(2);
  Space state_space_ = CartPoleSim::state_space();
  CartPoleSim sim_;
  std::optional<ObservationNoise> noise_;
  Rng rng_;
};

}  // namespace rlm::envs::popgym
