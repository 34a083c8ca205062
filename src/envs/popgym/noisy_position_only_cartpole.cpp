// NoisyPositionOnlyCartPole (memory skill: filter noisy positions, infer velocities); follows
// popgym/envs/noisy_position_only_cartpole.py. The physics lives in cartpole_physics.hpp, the noise in
// observation_noise.hpp.
#include "envs/popgym/noisy_position_only_cartpole.hpp"

#include <vector>

namespace rlm::envs::popgym {

NoisyPositionOnlyCartPole::NoisyPositionOnlyCartPole(std::string id, NoisyPositionOnlyCartPoleConfig config)
    : id_(std::move(id)), sim_(id_, config.max_episode_length), noise_(id_, config.noise_sigma) {}

void NoisyPositionOnlyCartPole::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  sim_.reset(rng_);
  write_obs(obs);  // upstream draws the reset noise after the state, from the same generator
}

void NoisyPositionOnlyCartPole::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  sim_.restore(state.at("state").get<std::array<double, 4>>());
  noise_.inject(state.at("noise").get<std::vector<double>>(), id_);
  write_obs(obs);
}

StepResult NoisyPositionOnlyCartPole::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = sim_.step(discrete_action(action, action_space_, id_), id_);
  write_obs(obs);
  return r;
}

void NoisyPositionOnlyCartPole::write_obs(std::span<float> obs) {
  obs[0] = static_cast<float>(sim_.state()[0]);
  obs[1] = static_cast<float>(sim_.state()[2]);
  noise_.apply(rng_, obs, kObsLow, kObsHigh);
}

}  // namespace rlm::envs::popgym
