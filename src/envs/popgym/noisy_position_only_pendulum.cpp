// NoisyPositionOnlyPendulum (memory skill: filter noisy angles, infer the angular velocity); follows
// popgym/envs/noisy_position_only_pendulum.py. The physics lives in pendulum_physics.hpp, the noise in
// observation_noise.hpp.
#include "envs/popgym/noisy_position_only_pendulum.hpp"

#include <vector>

namespace rlm::envs::popgym {

NoisyPositionOnlyPendulum::NoisyPositionOnlyPendulum(std::string id, NoisyPositionOnlyPendulumConfig config)
    : id_(std::move(id)), sim_(id_, config.max_episode_length), noise_(id_, config.noise_sigma) {}

void NoisyPositionOnlyPendulum::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  sim_.reset(rng_);
  write_obs(obs);  // upstream draws the reset noise after the state, from the same generator
}

void NoisyPositionOnlyPendulum::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto& s = state.at("state");
  sim_.restore(s.at(0).get<double>(), s.at(1).get<double>());
  noise_.inject(state.at("noise").get<std::vector<double>>(), id_);
  write_obs(obs);
}

StepResult NoisyPositionOnlyPendulum::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = sim_.step(PendulumSim::torque(action, action_space_, id_), id_);
  write_obs(obs);
  return r;
}

void NoisyPositionOnlyPendulum::write_obs(std::span<float> obs) {
  obs[0] = sim_.full_obs()[0];
  obs[1] = sim_.full_obs()[1];
  noise_.apply(rng_, obs, kObsLow, kObsHigh);
}

}  // namespace rlm::envs::popgym
