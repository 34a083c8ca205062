// Where a piece of work spends its time, by kernel (issue 33, goal 2: "profile where spiking, STM and KF lose"), from
// torch's own profiler (Kineto; CUPTI on a GPU) so that it runs wherever LibTorch does, with no external tool.
//
// On a GPU the rows are the device kernels (and copies and fills), each with its calls and summed device time, and
// `busy_us` is the union of their intervals: busy far below the wall time means the GPU waits for the host, so the
// work is bound by launches and host syncs, not by its kernels. On the CPU the rows are torch's operators by self
// time (their own time less that of operators called inside them), and the device is busy the whole wall time.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace rlm::nn {

struct ProfileRow {
  std::string name;
  int64_t calls = 0;
  double total_us = 0;
};

struct KernelProfile {
  double wall_us = 0;            ///< from start to stop, the device synchronised
  double busy_us = 0;            ///< device time covered by at least one row's interval
  std::vector<ProfileRow> rows;  ///< by total_us, largest first
  /// Calls summed over every row: on a GPU, the kernels launched.
  int64_t calls() const;
};

/// Profiles from construction to stop(). One at a time per process (torch's profiler is global).
class KernelProfiler {
 public:
  explicit KernelProfiler(const torch::Device& device);
  KernelProfiler(const KernelProfiler&) = delete;
  KernelProfiler& operator=(const KernelProfiler&) = delete;
  ~KernelProfiler();  ///< stops, discarding the result, if stop() was not called
  KernelProfile stop();

 private:
  torch::Device device_;
  bool running_ = false;
  int64_t start_ns_ = 0;
};

/// Names shortened for a table: a kernel signature's template arguments and parameter list dropped, then cut to
/// `width`.
std::string short_kernel_name(const std::string& name, size_t width);

}  // namespace rlm::nn
