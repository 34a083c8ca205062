// The shared acting loop (agents/acting.hpp): episode records carry the env's success flag, which the trainers and
// `rlm eval` turn into success rates. A scripted T-maze policy that remembers the goal shown at the start succeeds
// every time; one that never turns never does.
#include <catch2/catch.hpp>

#include "agents/acting.hpp"
#include "envs/vec_env.hpp"

namespace {

/// Passive T-maze by hand: reads the goal from each episode's first obs, walks right, turns on the last step.
class ScriptedTMaze : public rlm::agents::ActingPolicy {
 public:
  ScriptedTMaze(int64_t episode_length, bool turn) : length_(episode_length), turn_(turn) {}
  void begin(int64_t num_envs) override {
    goal_.assign(static_cast<size_t>(num_envs), 0);
    t_.assign(static_cast<size_t>(num_envs), 0);
  }
  torch::Tensor act(const torch::Tensor& obs, const torch::Tensor&, const torch::Tensor&, const torch::Tensor& starts,
                    bool, const torch::Generator&) override {
    const int64_t n = obs.size(0);
    auto actions = torch::zeros({n, 1});
    for (int64_t i = 0; i < n; ++i) {
      const auto u = static_cast<size_t>(i);
      if (starts[i].item<bool>()) {
        goal_[u] = obs[i][1].item<float>() > 0 ? 1 : -1;
        t_[u] = 0;
      }
      const bool last = ++t_[u] == length_;
      actions[i][0] = last && turn_ ? (goal_[u] == 1 ? 1.0f : 3.0f) : 0.0f;
    }
    return actions;
  }

 private:
  int64_t length_;
  bool turn_;
  std::vector<int> goal_;
  std::vector<int64_t> t_;
};

}  // namespace

TEST_CASE("run_episodes: episode records carry the env's success", "[agents][acting]") {
  rlm::envs::VecEnv envs("memory_rl/TMazePassive", 3, 1, 11, {.flatten = true});
  const auto spec = rlm::agents::ActionSpec::from_space(envs.action_space(), envs.id());
  for (bool turn : {true, false}) {
    INFO("turn " << turn);
    ScriptedTMaze policy(envs.max_episode_steps(), turn);
    int episodes = 0, successes = 0;
    double returns = 0;
    rlm::agents::run_episodes(envs, policy, spec, rlm::agents::episode_quota(12, 3), at::detail::createCPUGenerator(1),
                              [&](rlm::agents::EpisodeRecord&& r) {
                                ++episodes;
                                successes += r.success ? 1 : 0;
                                returns += r.episode_return;
                              });
    CHECK(episodes == 12);
    CHECK(successes == (turn ? 12 : 0));
    CHECK(returns == Approx(turn ? 12.0 : 0.0));
  }
}
