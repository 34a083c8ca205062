// MaskedCartPole: CartPole observing [x, theta] or [x_dot, theta_dot], optionally noisy; follows
// popgym/envs/{position_only,velocity_only,noisy_position_only}_cartpole.py (proroklab/popgym@410d5aa) and gymnasium
// classic_control/cartpole.py.
#include "envs/popgym/masked_cartpole.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "core/error.hpp"

namespace rlm::envs::popgym {

namespace {

Space observation_box(CartPoleObs half) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (half == CartPoleObs::kVelocities) return Space::box({-kInf, -kInf}, {kInf, kInf});
  return Space::box({-CartPoleSim::kXHigh, -CartPoleSim::kThetaHigh}, {CartPoleSim::kXHigh, CartPoleSim::kThetaHigh});
}

}  // namespace

MaskedCartPole::MaskedCartPole(std::string id, MaskedCartPoleConfig config)
    : id_(std::move(id)),
      observe_(config.observe),
      reset_observe_(config.reset_obs_positions ? CartPoleObs::kPositions : config.observe),
      observation_space_(observation_box(config.observe)),
      sim_(id_, config.max_episode_length) {
  if (config.noise_sigma) noise_.emplace(id_, *config.noise_sigma);  // after sim_: a bad length is reported first
}

void MaskedCartPole::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  sim_.reset(rng_);
  write_obs(reset_observe_, obs);  // upstream draws the reset noise after the state, from the same generator
}

void MaskedCartPole::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  sim_.restore(state.at("state").get<std::array<double, 4>>());
  if (noise_) noise_->inject(state.at("noise").get<std::vector<double>>(), id_);
  write_obs(reset_observe_, obs);
}

void MaskedCartPole::inject_draws(std::span<const double> draws) {
  if (noise_)
    noise_->inject(draws, id_);
  else if (!draws.empty())
    throw EnvError(fmt::format("{}: a noise-free step draws nothing, {} values were injected", id_, draws.size()));
}

StepResult MaskedCartPole::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = sim_.step(discrete_action(action, action_space_, id_), id_);
  write_obs(observe_, obs);
  return r;
}

void MaskedCartPole::write_obs(CartPoleObs half, std::span<float> obs) {
  // The state is [x, x_dot, theta, theta_dot]: positions at 0 and 2, velocities at 1 and 3.
  const size_t first = half == CartPoleObs::kVelocities ? 1 : 0;
  obs[0] = static_cast<float>(sim_.state()[first]);
  obs[1] = static_cast<float>(sim_.state()[first + 2]);
  // The clip bounds are the obs Box's float32 values, as numpy's np.clip sees them; infinite for velocities.
  if (noise_) noise_->apply(rng_, obs, observation_space_.low.data(), observation_space_.high.data());
}

}  // namespace rlm::envs::popgym
