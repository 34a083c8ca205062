// PositionOnlyCartPole (memory skill: infer velocities from positions); follows popgym/envs/position_only_cartpole.py
// and gymnasium classic_control/cartpole.py. The physics lives in cartpole_physics.hpp.
#include "envs/popgym/position_only_cartpole.hpp"

namespace rlm::envs::popgym {

PositionOnlyCartPole::PositionOnlyCartPole(std::string id, PositionOnlyCartPoleConfig config)
    : id_(std::move(id)), sim_(id_, config.max_episode_length) {}

void PositionOnlyCartPole::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  sim_.reset(rng_);
  write_obs(obs);
}

void PositionOnlyCartPole::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  sim_.restore(state.at("state").get<std::array<double, 4>>());
  write_obs(obs);
}

StepResult PositionOnlyCartPole::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = sim_.step(discrete_action(action, action_space_, id_), id_);
  write_obs(obs);
  return r;
}

void PositionOnlyCartPole::write_obs(std::span<float> obs) const {
  obs[0] = static_cast<float>(sim_.state()[0]);
  obs[1] = static_cast<float>(sim_.state()[2]);
}

}  // namespace rlm::envs::popgym
