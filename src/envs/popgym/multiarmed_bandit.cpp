// MultiarmedBandit (memory skill: average noisy payouts per arm); follows popgym/envs/multiarmed_bandit.py.
#include "envs/popgym/multiarmed_bandit.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace rlm::envs::popgym {

MultiarmedBandit::MultiarmedBandit(std::string id, MultiarmedBanditConfig config)
    : id_(std::move(id)), num_bandits_(config.num_bandits), episode_length_(config.episode_length) {
  if (num_bandits_ < 1) throw EnvError(fmt::format("{}: num_bandits must be >= 1, got {}", id_, num_bandits_));
  if (episode_length_ < 1) throw EnvError(fmt::format("{}: episode_length must be >= 1, got {}", id_, episode_length_));
  action_space_ = Space::discrete(num_bandits_);
  state_space_ = Space::box(std::vector<float>(static_cast<size_t>(num_bandits_), 0.0f),
                            std::vector<float>(static_cast<size_t>(num_bandits_), 1.0f));
  reward_scale_ = static_cast<float>(1.0 / episode_length_);
  bandits_.assign(static_cast<size_t>(num_bandits_), 0.0f);
}

void MultiarmedBandit::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  // numpy's float32 random(): the top 24 bits of a 32-bit draw times 2^-24, so every value is exact in float32.
  for (float& p : bandits_) p = static_cast<float>(rng_.next_u64() >> 40) * 0x1.0p-24f;
  start_episode(obs);
}

void MultiarmedBandit::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto bandits = state.at("bandits").get<std::vector<double>>();
  if (bandits.size() != bandits_.size())
    throw EnvError(fmt::format("{}: golden bandits must hold {} values", id_, bandits_.size()));
  for (size_t i = 0; i < bandits.size(); ++i) bandits_[i] = static_cast<float>(bandits[i]);
  start_episode(obs);
}

void MultiarmedBandit::start_episode(std::span<float> obs) {
  steps_ = 0;
  has_state_ = true;
  has_injected_ = false;
  obs[0] = 0;
}

void MultiarmedBandit::inject_draws(std::span<const double> draws) {
  if (draws.size() != 1)
    throw EnvError(fmt::format("{}: a step draws exactly one value, {} were injected", id_, draws.size()));
  injected_draw_ = draws[0];
  has_injected_ = true;
}

StepResult MultiarmedBandit::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (!has_state_) [[unlikely]]
    throw_env_misuse(id_, "step() called before the first reset()");
  const double u = has_injected_ ? injected_draw_ : rng_.uniform_01();
  has_injected_ = false;
  // float32 comparison, as numpy >= 2 does it (see the header).
  const bool paid = static_cast<float>(u) < bandits_[static_cast<size_t>(a)];
  StepResult r;
  r.reward = paid ? reward_scale_ : -reward_scale_;
  r.truncated = steps_ >= episode_length_ - 1;
  ++steps_;
  obs[0] = static_cast<float>(paid);
  return r;
}

void MultiarmedBandit::write_state(std::span<float> state) const {
  std::copy(bandits_.begin(), bandits_.end(), state.begin());
}

}  // namespace rlm::envs::popgym
