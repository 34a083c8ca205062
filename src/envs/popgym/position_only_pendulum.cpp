// PositionOnlyPendulum (memory skill: infer the angular velocity from angles); follows
// popgym/envs/position_only_pendulum.py and gymnasium classic_control/pendulum.py. The physics lives in
// pendulum_physics.hpp.
#include "envs/popgym/position_only_pendulum.hpp"

namespace rlm::envs::popgym {

PositionOnlyPendulum::PositionOnlyPendulum(std::string id, PositionOnlyPendulumConfig config)
    : id_(std::move(id)), sim_(id_, config.max_episode_length) {}

void PositionOnlyPendulum::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  sim_.reset(rng_);
  write_obs(obs);
}

void PositionOnlyPendulum::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto& s = state.at("state");
  sim_.restore(s.at(0).get<double>(), s.at(1).get<double>());
  write_obs(obs);
}

StepResult PositionOnlyPendulum::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = sim_.step(PendulumSim::torque(action, action_space_, id_), id_);
  write_obs(obs);
  return r;
}

void PositionOnlyPendulum::write_obs(std::span<float> obs) const {
  obs[0] = sim_.full_obs()[0];
  obs[1] = sim_.full_obs()[1];
}

}  // namespace rlm::envs::popgym
