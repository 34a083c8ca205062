// The Box2D tasks made partially observable: a fixed index mask (pomdp-baselines' POMDPWrapper: -P keeps positions
// and angles, -V velocities), i.i.d. Gaussian noise on the observation (the protocol of KF paper §5.3, App. F) and
// optionally on continuous actions (KF paper App. H). Physics, rewards and terminations see the true state.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "envs/rng.hpp"
#include "envs/wrappers.hpp"

namespace rlm::envs::box2d {

struct PartialObservationConfig {
  std::vector<int> kept;          ///< indices of the full obs that stay, in order
  std::vector<int> binary;        ///< indices of the full obs that are 0/1 flags (leg contacts)
  double obs_noise_sigma = 0;     ///< std of the noise added to every kept element (0: none)
  bool noise_on_binary = true;    ///< false: the binary flags stay exact (the literal protocol noises them too)
  double action_noise_sigma = 0;  ///< std of the noise added to continuous actions before the env clips them
};

/// Noise is drawn for the *full* obs on every reset and step from the wrapper's own stream (seeded from the episode
/// seed), and only then masked: F, P and V runs with one seed share the noise on their common elements, and the env's
/// own draws (terrain, dispersion) are unchanged by it (our choice: docs/envs/box2d.md).
class PartialObservation final : public Wrapper {
 public:
  /// Throws EnvError (naming the env) on an index outside the full obs, a negative sigma, or action noise on a
  /// discrete action space.
  PartialObservation(std::unique_ptr<Env> inner, PartialObservationConfig config);
  const Space& observation_space() const override { return observation_space_; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

 private:
  void observe(std::span<float> obs);

  PartialObservationConfig config_;
  Space observation_space_;
  std::vector<uint8_t> noised_;  ///< per full-obs index: whether noise is added to it
  std::vector<float> full_, noisy_action_;
  Rng obs_noise_, action_noise_;
};

}  // namespace rlm::envs::box2d
