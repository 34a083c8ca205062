#include "core/host_memory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "core/error.hpp"

namespace rlm {

uint64_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
}

void check_fits_in_memory(const std::string& key, const std::string& setting, const std::string& what, double bytes) {
  const uint64_t available = physical_memory_bytes();
  if (available == 0 || bytes <= static_cast<double>(available)) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  throw ConfigValueError(key, fmt::format("{}: {} needs at least {:.1f} GiB, more than this machine's {:.1f} GiB of "
                                          "memory",
                                          setting, what, bytes / kGiB, static_cast<double>(available) / kGiB));
}

}  // namespace rlm
