// How much memory this machine has, and the check that refuses a config whose buffers cannot fit in it: a clear
// exit-2 error naming the key, instead of an OOM kill or a raw allocator message minutes into a run.
#pragma once
#include <cstdint>
#include <string>

namespace rlm {

/// Bytes of physical memory (sysconf); 0 when the system does not say.
uint64_t physical_memory_bytes();

/// Throws ConfigValueError(key, ...) when `bytes` (a lower bound of what `what` allocates) exceeds the machine's
/// physical memory. `setting` is the offending value as the user would write it ("algo.ppo.steps_per_env =
/// 1000000000").
void check_fits_in_memory(const std::string& key, const std::string& setting, const std::string& what, double bytes);

}  // namespace rlm
