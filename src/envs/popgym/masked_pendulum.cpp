// MaskedPendulum: Pendulum observing [cos theta, sin theta], optionally noisy; follows
// popgym/envs/{position_only,noisy_position_only}_pendulum.py (proroklab/popgym@410d5aa) and gymnasium
// classic_control/pendulum.py.
#include "envs/popgym/masked_pendulum.hpp"

#include <fmt/format.h>

#include <vector>

#include "core/error.hpp"

namespace rlm::envs::popgym {

MaskedPendulum::MaskedPendulum(std::string id, MaskedPendulumConfig config)
    : id_(std::move(id)), sim_(id_, config.max_episode_length) {
  if (config.noise_sigma) noise_.emplace(id_, *config.noise_sigma);  // after sim_: a bad length is reported first
}

void MaskedPendulum::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  sim_.reset(rng_);
  write_obs(obs);  // upstream draws the reset noise after the state, from the same generator
}

void MaskedPendulum::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto& s = state.at("state");
  sim_.restore(s.at(0).get<double>(), s.at(1).get<double>());
  if (noise_) noise_->inject(state.at("noise").get<std::vector<double>>(), id_);
  write_obs(obs);
}

void MaskedPendulum::inject_draws(std::span<const double> draws) {
  if (noise_)
    noise_->inject(draws, id_);
  else if (!draws.empty())
    throw EnvError(fmt::format("{}: a noise-free step draws nothing, {} values were injected", id_, draws.size()));
}

StepResult MaskedPendulum::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = sim_.step(PendulumSim::torque(action, action_space_, id_), id_);
  write_obs(obs);
  return r;
}

void MaskedPendulum::write_obs(std::span<float> obs) {
  obs[0] = sim_.full_obs()[0];
  obs[1] = sim_.full_obs()[1];
  if (noise_) noise_->apply(rng_, obs, observation_space_.low.data(), observation_space_.high.data());
}

}  // namespace rlm::envs::popgym
