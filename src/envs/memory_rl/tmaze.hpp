// T-maze, passive and active (twni2016/Memory-RL@c9b8b39:envs/tmaze.py, TMazeClassicPassive / TMazeClassicActive).
// A corridor x = 0..o+Lc on y = 0 with two goal cells (o+Lc, ±1) at its end. The goal side is shown once, at the
// oracle cell x = 0: in the reset obs (passive, o = 0) or after one step back from the start x = 1 (active, o = 1).
// The agent must carry it Lc + 1 steps and turn to the right side on the last step. Memory-RL's ambiguous obs
// (Box(−1, 1, (2,))): [0, goal_y] the first time the obs is computed at x = 0, [0, 0] in the corridor, [1, y] at the
// junction column. Rewards: −1/Lc on every step but the last where x < t − o (falling behind the ideal pace), plus
// distract_reward on x = 0; on the last step only 1 if y = goal_y. The episode ends after its fixed length and counts
// as terminal (Memory-RL's finite_horizon_terminal); success = the goal was reached.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::memory_rl {

struct TMazeConfig {
  int corridor_length = 10;      ///< Lc
  int oracle_length = 0;         ///< o: 0 passive, 1 active
  double distract_reward = 0.0;  ///< reward on the oracle cell (Memory-RL's configs: 0)
};

class TMaze final : public Env, public GoldenReplayEnv {
 public:
  using Config = TMazeConfig;
  TMaze(std::string id, TMazeConfig config);

  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return episode_length_; }
  bool reports_success() const override { return true; }
  void reset(uint64_t seed, std::span<float> obs) override;
  StepResult step(std::span<const float> action, std::span<float> obs) override;

  /// Test hook for the golden replays: start an episode with the recorded goal ({"goal_y": ±1}) and write its obs.
  void restore_golden(const nlohmann::json& state, std::span<float> obs) override;

  int goal_y() const { return goal_y_; }
  int x() const { return x_; }
  int y() const { return y_; }

 private:
  void start_episode(int goal_y, std::span<float> obs);
  void write_obs(std::span<float> obs);  // Memory-RL's get_obs: marks the oracle visited on its first computation

  std::string id_;
  Space observation_space_ = Space::box({-1, -1}, {1, 1});
  Space action_space_ = Space::discrete(4);  // 0 = (+1, 0), 1 = (0, +1), 2 = (−1, 0), 3 = (0, −1)
  Rng rng_;
  int oracle_length_;
  int junction_;  ///< x of the junction column: o + Lc
  int episode_length_;
  double penalty_, distract_reward_;
  int x_ = 0, y_ = 0, goal_y_ = 1, t_ = 0;
  bool oracle_visited_ = false;
  bool running_ = false;
};

}  // namespace rlm::envs::memory_rl
