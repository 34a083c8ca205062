// A batch of envs stepped together, with auto-reset and a small persistent thread pool (STYLE principle 5: env
// authors never see batching or threads). Env i's k-th episode is seeded derive_seed(seed, {kEnvStream, i, k}), and
// envs are split into fixed contiguous chunks, so every output is bitwise independent of num_threads.
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "envs/env.hpp"
#include "envs/env_extensions.hpp"
#include "envs/registry.hpp"

namespace rlm::envs {

/// Builds one env; VecEnv calls it once per env, on the thread that will step that env (so it must be safe to call
/// from several threads at once). Every env it returns must have the same spaces and episode length.
using EnvFactory = std::function<std::unique_ptr<Env>()>;

class VecEnv {
 public:
  /// num_threads is capped at num_envs; 1 runs everything inline on the calling thread.
  VecEnv(const std::string& id, int num_envs, int num_threads, uint64_t seed, const WrapperOptions& options = {},
         const EnvOptions& env_options = {});
  /// Envs from any factory (an env not in the registry, or one built with custom arguments). Env i, if an
  /// InstanceSeededEnv, gets seed_instance(derive_seed(seed, {kEnvInstanceStream, i})) once it is built.
  VecEnv(EnvFactory factory, int num_envs, int num_threads, uint64_t seed);
  ~VecEnv();
  VecEnv(const VecEnv&) = delete;
  VecEnv& operator=(const VecEnv&) = delete;

  int num_envs() const { return num_envs_; }
  int num_threads() const { return num_threads_; }
  int64_t obs_size() const { return obs_size_; }        ///< raw obs floats of one env
  int64_t action_size() const { return action_size_; }  ///< raw action floats of one env
  const Space& observation_space() const { return envs_[0]->observation_space(); }
  /// The observation space of the env under its wrappers (an image before Flatten; obs() starts with it when the
  /// wrappers only append: previous action, is_t0, flatten).
  const Space& base_observation_space() const;
  const Space& action_space() const { return envs_[0]->action_space(); }
  int64_t max_episode_steps() const { return envs_[0]->max_episode_steps(); }
  const std::string& id() const { return envs_[0]->id(); }
  bool reports_success() const { return envs_[0]->reports_success(); }
  /// Whether the envs have a task split (TaskSplitEnv), so that goal_states() and tasks() are meaningful.
  bool reports_goal_state() const { return task_splits_[0] != nullptr; }
  /// The tasks in each env's split (meta-RL envs with env.options.task_split; 0 otherwise).
  int split_size() const { return task_splits_[0] != nullptr ? task_splits_[0]->split_size() : 0; }
  /// TaskSplitEnv::pin_task on env `env`: its following resets play split task `index` (−1: drawn again). Throws
  /// rlm::EnvError for envs without a task split.
  void pin_task(int env, int index);

  /// Starts a new episode in every env (episode index = its episode counter, which then increments).
  void reset();
  /// actions: [num_envs, action_size] row-major. An env whose episode ends is reset at once: obs() then holds its
  /// reset obs and final_obs() the obs the episode ended on. An exception thrown by any env (e.g. rlm::EnvError for an
  /// invalid action) is rethrown here after every thread has finished; the batch is then mid-step and needs reset().
  void step(std::span<const float> actions);

  std::span<const float> obs() const { return obs_; }              ///< [num_envs, obs_size]: obs for the next action
  std::span<const float> final_obs() const { return final_obs_; }  ///< [num_envs, obs_size]: valid where done
  std::span<const float> rewards() const { return rewards_; }
  std::span<const uint8_t> terminated() const { return terminated_; }
  std::span<const uint8_t> truncated() const { return truncated_; }
  /// Where an episode ended this step: whether it reached its goal (envs that report_success()).
  std::span<const uint8_t> successes() const { return successes_; }
  /// TaskSplitEnv::is_goal_state() and task() after each env's last step (false and −1 right after a reset, and for
  /// envs without a task split).
  std::span<const uint8_t> goal_states() const { return goal_states_; }
  std::span<const int> tasks() const { return tasks_; }

  /// Episodes started per env; env i's next reset starts episode episode_counters()[i].
  const std::vector<uint64_t>& episode_counters() const { return episode_counters_; }
  /// For resuming a run: the next reset of env i (explicit or automatic) starts episode counters[i].
  void set_episode_counters(std::vector<uint64_t> counters);

 private:
  enum class Task { Construct, Reset, Step };

  void run(Task task);                 // runs `task` over every chunk and rethrows the first error
  void run_chunk(int chunk) noexcept;  // runs the current task over one chunk, storing any exception
  void adopt_env(int i);               // seeds env i's instance draws and finds its task split
  void reset_env(int i);
  void worker_loop(int chunk);
  void stop_workers();  // wakes and joins the workers

  int num_envs_;
  int num_threads_;
  uint64_t seed_;
  int64_t obs_size_ = 0;
  int64_t action_size_ = 0;
  bool needs_reset_ = true;

  std::vector<std::unique_ptr<Env>> envs_;
  std::vector<TaskSplitEnv*> task_splits_;  // per env, its TaskSplitEnv under the wrappers, or nullptr
  std::vector<float> obs_, final_obs_, rewards_;
  std::vector<uint8_t> terminated_, truncated_, successes_, goal_states_;
  std::vector<int> tasks_;
  std::vector<uint64_t> episode_counters_;
  std::vector<int> chunk_begin_;  // chunk c covers envs [chunk_begin_[c], chunk_begin_[c + 1])

  // Pool: the caller publishes task_/actions_, bumps generation_ and runs chunk 0; worker c runs chunk c and
  // decrements pending_. Both sides spin for up to 50 us and then sleep in the kernel (see vec_env.cpp).
  Task task_ = Task::Reset;
  const float* actions_ = nullptr;
  EnvFactory factory_;                      // used only while the constructor runs Task::Construct
  std::vector<std::exception_ptr> errors_;  // one slot per chunk
  // Separate cache lines: the caller writes generation_ while workers write pending_. 32-bit counters, because the
  // kernel wait (futex) works on 32-bit words; a 64-bit atomic would wait on a shared proxy. Wrap-around is harmless
  // (only inequality is tested).
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  alignas(64) std::atomic<int> sleepers_{0};  // threads blocked in the kernel: notify only when there are some
  std::atomic<bool> stopping_{false};
  std::vector<std::jthread> workers_;  // last member: joined (in ~VecEnv) before anything they use is destroyed
};

}  // namespace rlm::envs
