// Wind (pomdp-baselines envs/meta/toy_navigation/wind.py, original and SHM); see wind.hpp.
#include "envs/meta/wind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "envs/meta/varibad_action.hpp"
#include "envs/numpy_legacy_rng.hpp"

namespace rlm::envs::meta {
namespace {

constexpr float kActionBound = 0.1f;  // the env's Box(−0.1, 0.1), float32

}  // namespace

Wind::Wind(std::string id, WindConfig config)
    : id_(std::move(id)),
      observation_space_(Space::box({-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()},
                                    {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity()})) {
  const bool shm = config.variant == "shm";
  if (!shm && config.variant != "original")
    throw EnvError(fmt::format("{}: variant must be shm or original, got '{}'", id_, config.variant));
  const int n = shm ? 200 : 60;
  const double range = shm ? 0.1 : 0.08;
  horizon_ = shm ? 100 : 75;
  goal_radius_ = shm ? 0.01 : 0.03;
  const int n_train = config.train_tasks > 0 ? config.train_tasks : (shm ? 50 : 40);
  if (n_train >= n) throw EnvError(fmt::format("{}: train_tasks must be below the {} tasks, got {}", id_, n, n_train));

  NumpyLegacyRng numpy(1337);  // the constructor's np.random.seed(1337)
  for (int i = 0; i < n; ++i) {
    const double x = numpy.uniform(-range, range);
    winds_.push_back({x, numpy.uniform(-range, range)});
  }
  // The learner's split continues the same stream: train = perm[:n_train], eval = perm[n_train:] (perm[−n_eval:]
  // with n_eval = n − n_train, as every paper config has it).
  const std::vector<int> perm = numpy.permutation(n);
  split_ = TaskSplit(id_, perm, n_train, config.task_split);
}

void Wind::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  reset_task(split_.next(rng_), obs);
}

void Wind::reset_task(int task, std::span<float> obs) {
  task_ = task;
  state_ = {0.0, 0.0};
  t_ = 0;
  reached_ = false;
  running_ = true;
  obs[0] = obs[1] = 0.0f;
}

void Wind::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const int task = state.at("task").get<int>();
  if (task < 0 || task >= static_cast<int>(winds_.size()))
    throw EnvError(fmt::format("{}: golden task {} is outside the {} tasks", id_, task, winds_.size()));
  reset_task(task, obs);
}

bool Wind::is_goal_state() const {
  // np.linalg.norm(s − (0, 1)): sqrt of the sum of squares, in that order.
  const double dx = state_[0] - 0.0, dy = state_[1] - 1.0;
  return std::sqrt(dx * dx + dy * dy) <= goal_radius_;
}

StepResult Wind::step(std::span<const float> action, std::span<float> obs) {
  if (action.size() != 2 || !std::isfinite(action[0]) || !std::isfinite(action[1])) [[unlikely]]
    throw_invalid_action(id_, action, action_space_);
  if (!running_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  const auto& wind = winds_[static_cast<size_t>(task_)];
  // s + a + w in float64, the float32 action promoted (numpy: float64 state + float32 action, then the wind).
  for (size_t i = 0; i < 2; ++i)
    state_[i] = state_[i] + static_cast<double>(varibad_action(action[i], kActionBound)) + wind[i];
  const bool in_goal = is_goal_state();
  reached_ = reached_ || in_goal;
  StepResult r;
  r.reward = in_goal ? 1.0f : 0.0f;
  if (++t_ >= horizon_) {
    r.truncated = true;
    r.success = reached_;
    running_ = false;
  }
  obs[0] = static_cast<float>(state_[0]);
  obs[1] = static_cast<float>(state_[1]);
  return r;
}

}  // namespace rlm::envs::meta
