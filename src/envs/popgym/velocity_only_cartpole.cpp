// VelocityOnlyCartPole (memory skill: integrate velocities into positions); follows
// popgym/envs/velocity_only_cartpole.py and gymnasium classic_control/cartpole.py. The physics lives in
// cartpole_physics.hpp.
#include "envs/popgym/velocity_only_cartpole.hpp"

#include <limits>

namespace rlm::envs::popgym {

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
}

VelocityOnlyCartPole::VelocityOnlyCartPole(std::string id, VelocityOnlyCartPoleConfig config)
    : id_(std::move(id)),
      observation_space_(Space::box({-kInf, -kInf}, {kInf, kInf})),
      sim_(id_, config.max_episode_length),
      reset_obs_velocities_(config.reset_obs_velocities) {}

void VelocityOnlyCartPole::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  sim_.reset(rng_);
  write_reset_obs(obs);
}

void VelocityOnlyCartPole::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  sim_.restore(state.at("state").get<std::array<double, 4>>());
  write_reset_obs(obs);
}

void VelocityOnlyCartPole::write_reset_obs(std::span<float> obs) const {
  // Upstream's reset() picks state components 0 and 2 (copied from PositionOnlyCartPole), its step() 1 and 3.
  const size_t first = reset_obs_velocities_ ? 1 : 0;
  obs[0] = static_cast<float>(sim_.state()[first]);
  obs[1] = static_cast<float>(sim_.state()[first + 2]);
}

StepResult VelocityOnlyCartPole::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = sim_.step(discrete_action(action, action_space_, id_), id_);
  obs[0] = static_cast<float>(sim_.state()[1]);
  obs[1] = static_cast<float>(sim_.state()[3]);
  return r;
}

}  // namespace rlm::envs::popgym
