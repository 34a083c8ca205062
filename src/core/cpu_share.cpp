#include "core/cpu_share.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "core/config_io.hpp"

namespace rlm {

int usable_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) return std::max(1, CPU_COUNT(&mask));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int cpu_share() {
  int sharers = 1;
  if (const char* value = std::getenv(kCpuShareVariable); value != nullptr) {
    const auto n = parse_integer(value);
    if (n && *n > 0 && *n <= 1 << 20) sharers = static_cast<int>(*n);
  }
  return std::max(1, usable_cpus() / sharers);
}

}  // namespace rlm
