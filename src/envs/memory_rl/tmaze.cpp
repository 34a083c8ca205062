// T-maze (Memory-RL envs/tmaze.py); see tmaze.hpp.
#include "envs/memory_rl/tmaze.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace rlm::envs::memory_rl {

TMaze::TMaze(std::string id, TMazeConfig config)
    : id_(std::move(id)),
      oracle_length_(config.oracle_length),
      junction_(config.oracle_length + config.corridor_length),
      // Passive: Lc + 1 (o = 0); active: Lc + 2o + 1 = Lc + 3, the steps back to the oracle and forth again.
      episode_length_(config.corridor_length + 2 * config.oracle_length + 1),
      penalty_(-1.0 / config.corridor_length),  // Memory-RL's configs: the penalties of a whole episode sum to −1
      distract_reward_(config.distract_reward) {
  if (config.corridor_length < 1)
    throw EnvError(fmt::format("{}: corridor_length must be >= 1, got {}", id_, config.corridor_length));
}

void TMaze::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  // Memory-RL draws np.random.choice([-1, 1]) from numpy's global generator; ours is the env's own stream.
  start_episode(rng_.uniform_int(2) == 0 ? -1 : 1, obs);
}

void TMaze::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  start_episode(state.at("goal_y").get<int>(), obs);
}

void TMaze::start_episode(int goal_y, std::span<float> obs) {
  x_ = oracle_length_;
  y_ = 0;
  goal_y_ = goal_y;
  t_ = 0;
  oracle_visited_ = false;
  running_ = true;
  write_obs(obs);
}

void TMaze::write_obs(std::span<float> obs) {
  if (x_ == 0) {
    obs[0] = 0.0f;
    obs[1] = oracle_visited_ ? 0.0f : static_cast<float>(goal_y_);
    oracle_visited_ = true;
  } else if (x_ < junction_) {
    obs[0] = obs[1] = 0.0f;
  } else {
    obs[0] = 1.0f;
    obs[1] = static_cast<float>(y_);
  }
}

StepResult TMaze::step(std::span<const float> action, std::span<float> obs) {
  const int64_t a = discrete_action(action, action_space_, id_);
  if (!running_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  ++t_;
  static constexpr int kMoveX[4] = {1, 0, -1, 0}, kMoveY[4] = {0, 1, 0, -1};
  const int nx = x_ + kMoveX[a], ny = y_ + kMoveY[a];
  // The map: the corridor 0..junction on y = 0, and the two goal cells above and below the junction.
  const bool open = (ny == 0 && nx >= 0 && nx <= junction_) || (nx == junction_ && (ny == 1 || ny == -1));
  if (open) {
    x_ = nx;
    y_ = ny;
  }
  StepResult r;
  if (t_ >= episode_length_) {
    r.success = y_ == goal_y_;
    r.reward = r.success ? 1.0f : 0.0f;  // the last step: the goal reward only, no penalty
    r.terminated = true;
    running_ = false;
  } else {
    double reward = x_ < t_ - oracle_length_ ? penalty_ : 0.0;
    if (x_ == 0) reward += distract_reward_;
    r.reward = static_cast<float>(reward);
  }
  write_obs(obs);
  return r;
}

}  // namespace rlm::envs::memory_rl
