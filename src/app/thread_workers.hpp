// Tasks on threads of this process, as `rlm sweep --in-process` trains its runs: each task's messages go to its own
// log file (core/run_output.hpp) and, given a GPU, its CUDA work to a stream of its own on that device, so that runs
// sharing a GPU overlap there without MPS (processes on one GPU take turns unless MPS runs). An exception that ends a
// task is reported in its log and turned into the exit status a worker process would have had (app/exit_status.hpp).
#pragma once
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace rlm::app {

class ThreadWorkers {
 public:
  ThreadWorkers() = default;
  ThreadWorkers(const ThreadWorkers&) = delete;
  ThreadWorkers& operator=(const ThreadWorkers&) = delete;
  ~ThreadWorkers();  ///< waits for the tasks still running

  /// Runs `task` on a new thread, its messages appended to `log`; `gpu`: the CUDA device index it works on, or -1.
  void start(int id, std::function<int()> task, const std::filesystem::path& log, int gpu);
  /// A task that has ended since the last call, as (id, exit status), waiting at most `wait` for one; nullopt if none.
  std::optional<std::pair<int, int>> poll(std::chrono::milliseconds wait);
  /// Tasks started and not yet returned by poll().
  size_t running() const { return threads_.size(); }

 private:
  std::map<int, std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable ended_signal_;
  std::vector<std::pair<int, int>> ended_;  ///< guarded by mutex_
};

}  // namespace rlm::app
