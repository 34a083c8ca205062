#include "envs/box2d/partial_observation.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/seed.hpp"

namespace rlm::envs::box2d {
namespace {

// Sub-streams of the episode seed: the env itself is reset with the seed unchanged.
constexpr uint64_t kObservationNoiseStream = 0x6F62736E6F697365ull;  // "obsnoise"
constexpr uint64_t kActionNoiseStream = 0x6163746E6F697365ull;       // "actnoise"

}  // namespace

PartialObservation::PartialObservation(std::unique_ptr<Env> inner, PartialObservationConfig config)
    : Wrapper(std::move(inner)), config_(std::move(config)) {
  const Space& full = inner_->observation_space();
  const auto n = static_cast<int>(full.low.size());
  const std::string id = gym_style_id(inner_->id());
  std::vector<float> low, high;
  for (int i : config_.kept) {
    if (i < 0 || i >= n) throw EnvError(fmt::format("{}: observation index {} is outside 0..{}", id, i, n - 1));
    low.push_back(full.low[static_cast<size_t>(i)]);
    high.push_back(full.high[static_cast<size_t>(i)]);
  }
  if (!(config_.obs_noise_sigma >= 0) || !(config_.action_noise_sigma >= 0))
    throw EnvError(fmt::format("{}: noise sigmas must be >= 0, got obs {} and action {}", id, config_.obs_noise_sigma,
                               config_.action_noise_sigma));
  if (config_.action_noise_sigma > 0 && inner_->action_space().kind != Space::Kind::Box)
    throw EnvError(fmt::format("{}: action noise needs continuous actions", id));
  observation_space_ = Space::box(std::move(low), std::move(high));
  noised_.assign(static_cast<size_t>(n), config_.obs_noise_sigma > 0 ? 1 : 0);
  if (!config_.noise_on_binary)
    for (int i : config_.binary) noised_.at(static_cast<size_t>(i)) = 0;
  full_.resize(static_cast<size_t>(n));
  noisy_action_.resize(inner_->action_space().low.size());
}

void PartialObservation::observe(std::span<float> obs) {
  if (config_.obs_noise_sigma > 0) {
    for (size_t i = 0; i < full_.size(); ++i) {
      const double noise = config_.obs_noise_sigma * obs_noise_.standard_normal();  // drawn for every element
      if (noised_[i]) full_[i] = static_cast<float>(static_cast<double>(full_[i]) + noise);
    }
  }
  for (size_t k = 0; k < config_.kept.size(); ++k) obs[k] = full_[static_cast<size_t>(config_.kept[k])];
}

void PartialObservation::reset(uint64_t seed, std::span<float> obs) {
  obs_noise_.reseed(derive_seed(seed, {kObservationNoiseStream}));
  action_noise_.reseed(derive_seed(seed, {kActionNoiseStream}));
  inner_->reset(seed, full_);
  observe(obs);
}

StepResult PartialObservation::step(std::span<const float> action, std::span<float> obs) {
  std::span<const float> applied = action;
  if (config_.action_noise_sigma > 0 && action.size() == noisy_action_.size()) {
    for (size_t i = 0; i < action.size(); ++i)
      noisy_action_[i] = static_cast<float>(static_cast<double>(action[i]) +
                                            config_.action_noise_sigma * action_noise_.standard_normal());
    applied = noisy_action_;
  }
  const StepResult r = inner_->step(applied, full_);
  observe(obs);
  return r;
}

}  // namespace rlm::envs::box2d
