#include "app/thread_workers.hpp"

#include <c10/core/StreamGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <cerrno>
#include <cstring>

#include "app/exit_status.hpp"
#include "core/error.hpp"
#include "core/run_output.hpp"

namespace rlm::app {
namespace {

/// The task's run, with its messages in `out` and, on a GPU, its CUDA work on a stream of its own: a pool stream of
/// the device, made this thread's current stream, which every torch op and our kernels (src/scan) launch on.
int run_task(const std::function<int()>& task, std::FILE* out, int gpu) {
  const RunOutputScope output(out);
  try {
    std::optional<c10::StreamGuard> stream;
    if (gpu >= 0 && torch::cuda::is_available()) {
      const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
      stream.emplace(
          cuda.getStreamFromGlobalPool(c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(gpu))));
    }
    return task();
  } catch (...) {
    return report_exception(std::current_exception(), out);
  }
}

}  // namespace

ThreadWorkers::~ThreadWorkers() {
  for (auto& [id, thread] : threads_) thread.join();
}

void ThreadWorkers::start(int id, std::function<int()> task, const std::filesystem::path& log, int gpu) {
  std::FILE* out = std::fopen(log.c_str(), "a");
  if (out == nullptr) throw UsageError(fmt::format("cannot open the log '{}': {}", log.string(), std::strerror(errno)));
  std::setvbuf(out, nullptr, _IOLBF, 1 << 16);  // line by line, as a worker process's log reads while it trains
  threads_[id] = std::thread([this, id, task = std::move(task), out, gpu] {
    const int status = run_task(task, out, gpu);
    std::fclose(out);
    const std::lock_guard lock(mutex_);
    ended_.emplace_back(id, status);
    ended_signal_.notify_one();
  });
}

std::optional<std::pair<int, int>> ThreadWorkers::poll(std::chrono::milliseconds wait) {
  std::pair<int, int> ended;
  {
    std::unique_lock lock(mutex_);
    if (!ended_signal_.wait_for(lock, wait, [&] { return !ended_.empty(); })) return std::nullopt;
    ended = ended_.front();
    ended_.erase(ended_.begin());
  }
  const auto it = threads_.find(ended.first);
  it->second.join();
  threads_.erase(it);
  return ended;
}

}  // namespace rlm::app
