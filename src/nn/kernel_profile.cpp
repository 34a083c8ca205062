#include "nn/kernel_profile.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <unordered_map>

namespace rlm::nn {
namespace {

namespace profiler = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// libkineto::ActivityType (kineto/ActivityType.h), as KinetoEvent::activityType() reports it.
constexpr uint8_t kCpuOp = 0, kGpuMemcpy = 3, kGpuMemset = 4, kKernel = 5;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void synchronize(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

struct Interval {
  uint64_t start, end;
};

// Length of the union of the intervals (kernels on several streams may overlap).
double covered_us(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  uint64_t covered = 0, reach = 0;
  for (const auto& i : intervals) {
    const uint64_t from = std::max(i.start, reach);
    if (i.end > from) covered += i.end - from;
    reach = std::max(reach, i.end);
  }
  return static_cast<double>(covered) / 1e3;
}

struct Accumulator {
  std::unordered_map<std::string, ProfileRow> rows;
  void add(const std::string& name, double us) {
    auto& row = rows[name];
    row.name = name;
    row.calls += 1;
    row.total_us += us;
  }
};

// The device's kernels, copies and fills.
void add_device_rows(const std::vector<profiler::KinetoEvent>& events, Accumulator& acc, KernelProfile& profile) {
  std::vector<Interval> intervals;
  for (const auto& e : events) {
    const uint8_t type = e.activityType();
    if (type != kKernel && type != kGpuMemcpy && type != kGpuMemset) continue;
    acc.add(e.name(), static_cast<double>(e.durationNs()) / 1e3);
    intervals.push_back({e.startNs(), e.endNs()});
  }
  profile.busy_us = covered_us(std::move(intervals));
}

// torch's operators by self time: on each thread operators nest, and each one's time less its direct children's.
void add_operator_rows(const std::vector<profiler::KinetoEvent>& events, Accumulator& acc) {
  struct Op {
    const profiler::KinetoEvent* event;
    double self_us;
  };
  std::map<uint64_t, std::vector<Op>> by_thread;
  for (const auto& e : events)
    if (e.activityType() == kCpuOp && e.deviceType() == c10::DeviceType::CPU)
      by_thread[e.startThreadId()].push_back({&e, static_cast<double>(e.durationNs()) / 1e3});
  for (auto& [thread, ops] : by_thread) {
    // Parents first: earlier start, and at the same start the longer one.
    std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) {
      if (a.event->startNs() != b.event->startNs()) return a.event->startNs() < b.event->startNs();
      return a.event->endNs() > b.event->endNs();
    });
    std::vector<Op*> open;
    for (auto& op : ops) {
      while (!open.empty() && open.back()->event->endNs() <= op.event->startNs()) open.pop_back();
      if (!open.empty()) open.back()->self_us -= static_cast<double>(op.event->durationNs()) / 1e3;
      open.push_back(&op);
    }
    for (const auto& op : ops) acc.add(op.event->name(), std::max(0.0, op.self_us));
  }
}

}  // namespace

int64_t KernelProfile::calls() const {
  int64_t sum = 0;
  for (const auto& row : rows) sum += row.calls;
  return sum;
}

KernelProfiler::KernelProfiler(const torch::Device& device) : device_(device) {
  std::set<ActivityType> activities{ActivityType::CPU};
  if (device.is_cuda()) {
    activities.insert(ActivityType::CUDA);
  } else {
    // Kineto looks for a GPU even when asked for the CPU alone, and logs an ERROR line where there is none.
    setenv("KINETO_LOG_LEVEL", "5", /*overwrite=*/0);
  }
  const ProfilerConfig config(ProfilerState::KINETO);
  profiler::prepareProfiler(config, activities);
  synchronize(device_);
  profiler::enableProfiler(config, activities);
  running_ = true;
  start_ns_ = now_ns();
}

KernelProfiler::~KernelProfiler() {
  if (running_) profiler::disableProfiler();
}

KernelProfile KernelProfiler::stop() {
  TORCH_CHECK(running_, "KernelProfiler: stop() called twice");
  synchronize(device_);
  KernelProfile profile;
  profile.wall_us = static_cast<double>(now_ns() - start_ns_) / 1e3;
  running_ = false;
  const auto result = profiler::disableProfiler();
  Accumulator acc;
  if (device_.is_cuda()) {
    add_device_rows(result->events(), acc, profile);
  } else {
    add_operator_rows(result->events(), acc);
    profile.busy_us = profile.wall_us;
  }
  for (auto& [name, row] : acc.rows) profile.rows.push_back(std::move(row));
  std::sort(profile.rows.begin(), profile.rows.end(),
            [](const ProfileRow& a, const ProfileRow& b) { return a.total_us > b.total_us; });
  return profile;
}

std::string short_kernel_name(const std::string& name, size_t width) {
  // A kernel's signature, "void at::native::(anonymous namespace)::foo<float, 4>(Args...)", becomes
  // "at::native::(anonymous namespace)::foo"; other names (operators, autograd nodes) keep their template arguments.
  if (name.rfind("void ", 0) != 0) return name.size() > width ? name.substr(0, width - 3) + "..." : name;
  const std::string out = name.substr(5);
  static const std::string anonymous = "(anonymous namespace)";  // part of the name, not a parameter list
  int depth = 0;
  std::string kept;
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (depth == 0 && out.compare(i, anonymous.size(), anonymous) == 0) {
      kept += anonymous;
      i += anonymous.size() - 1;
    } else if (c == '<' || c == '(') {
      ++depth;
    } else if ((c == '>' || c == ')') && depth > 0) {
      --depth;
    } else if (depth == 0) {
      kept += c;
    }
  }
  if (kept.size() > width) kept = kept.substr(0, width - 3) + "...";
  return kept;
}

}  // namespace rlm::nn
