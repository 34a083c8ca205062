// Point Robot (pomdp-baselines envs/meta/toy_navigation/point_robot.py SparsePointEnv in VariBadWrapper with k = 2,
// original and SHM); see point_robot.hpp.
#include "envs/meta/point_robot.hpp"

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
constexpr double kPi = 3.14159265358979323846;

}  // namespace

PointRobot::PointRobot(std::string id, PointRobotConfig config)
    : id_(std::move(id)),
      observation_space_(
          Space::box({-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 0},
                     {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), 1})) {
  const bool shm = config.variant == "shm";
  if (!shm && config.variant != "original")
    throw EnvError(fmt::format("{}: variant must be shm or original, got '{}'", id_, config.variant));
  const int n = shm ? 200 : 100;
  horizon_ = shm ? 100 : 60;
  goal_radius_ = shm ? 0.05 : 0.2;
  const int n_train = config.train_tasks > 0 ? config.train_tasks : (shm ? 50 : 80);
  if (n_train >= n) throw EnvError(fmt::format("{}: train_tasks must be below the {} tasks, got {}", id_, n, n_train));

  // The SHM constructor's np.random.seed(1337); the original's generator as system.reproduce(seed = 1) leaves it.
  NumpyLegacyRng numpy(shm ? 1337 : 1);
  const double placeholder = shm ? 10.0 : 1.0;
  for (int i = 0; i < 2 * n; ++i) numpy.uniform(-placeholder, placeholder);  // PointEnv's goals, discarded
  numpy.uniform(-1.5, 1.5);  // reset_task(0) in PointEnv.__init__: a start state
  numpy.uniform(-0.5, 1.5);
  goals_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const double angle = numpy.uniform(0.0, kPi);
    goals_.push_back({1.0 * std::cos(angle), 1.0 * std::sin(angle)});
  }
  numpy.shuffle(goals_);
  numpy.uniform(-1.5, 1.5);  // reset_task(0) in SparsePointEnv.__init__
  numpy.uniform(-0.5, 1.5);
  const std::vector<int> perm = numpy.permutation(n);  // the learner's split continues the same stream
  split_ = TaskSplit(id_, perm, n_train, config.task_split);
}

void PointRobot::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  const int task = split_.next(rng_);
  Point start, second;
  for (Point* p : {&start, &second}) {
    const double x = rng_.uniform(-1.5, 1.5);
    *p = {x, rng_.uniform(-0.5, 1.5)};
  }
  reset_task(task, start, second, obs);
}

void PointRobot::reset_task(int task, const Point& start, const Point& second_start, std::span<float> obs) {
  task_ = task;
  state_ = start;
  second_start_ = second_start;
  t_ = 0;
  episode_ = 0;
  reached_ = false;
  running_ = true;
  obs[0] = static_cast<float>(state_[0]);
  obs[1] = static_cast<float>(state_[1]);
  obs[2] = 0.0f;
}

void PointRobot::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const int task = state.at("task").get<int>();
  if (task < 0 || task >= static_cast<int>(goals_.size()))
    throw EnvError(fmt::format("{}: golden task {} is outside the {} tasks", id_, task, goals_.size()));
  reset_task(task, state.at("start").get<Point>(), state.at("second_start").get<Point>(), obs);
}

bool PointRobot::is_goal_state() const {
  // np.linalg.norm(s − g) <= goal_radius
  const Point& g = goals_[static_cast<size_t>(task_)];
  const double dx = state_[0] - g[0], dy = state_[1] - g[1];
  return std::sqrt(dx * dx + dy * dy) <= goal_radius_;
}

StepResult PointRobot::step(std::span<const float> action, std::span<float> obs) {
  if (action.size() != 2 || !std::isfinite(action[0]) || !std::isfinite(action[1])) [[unlikely]]
    throw_invalid_action(id_, action, action_space_);
  if (!running_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");
  for (size_t i = 0; i < 2; ++i) state_[i] = state_[i] + static_cast<double>(varibad_action(action[i], kActionBound));
  // PointEnv's dense reward −((x − gx)**2 + (y − gy)**2)**0.5 (pow, as Python computes it), sparsified.
  const Point& g = goals_[static_cast<size_t>(task_)];
  const double dx = state_[0] - g[0], dy = state_[1] - g[1];
  const double dense = -std::pow(dx * dx + dy * dy, 0.5);
  StepResult r;
  r.reward = dense >= -goal_radius_ ? 1.0f : 0.0f;
  obs[0] = static_cast<float>(state_[0]);
  obs[1] = static_cast<float>(state_[1]);
  const bool done_mdp = ++t_ >= horizon_;
  obs[2] = done_mdp ? 1.0f : 0.0f;
  if (done_mdp) {
    if (episode_ == 0) {
      // VariBadWrapper: the inner episode ended before the k-th; reset it at once (same task). The obs stays the
      // terminal one.
      episode_ = 1;
      t_ = 0;
      state_ = second_start_;
    } else {
      r.truncated = true;
      running_ = false;
    }
  }
  reached_ = reached_ || is_goal_state();  // the learner's check, after the wrapper's step
  if (r.truncated) r.success = reached_;
  return r;
}

}  // namespace rlm::envs::meta
