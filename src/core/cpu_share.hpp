// How many CPUs a process should use for its own thread pools: the CPUs its affinity mask allows (what Slurm's cgroup
// or `taskset` gives it; std::thread::hardware_concurrency() counts the whole machine), divided among the processes
// that share them when a sweep runs several workers at once (it tells each one through RLM_CPU_SHARE). Without this, N
// runs that each size their torch pool to the machine oversubscribe it N-fold, and PyTorch's spinning pool threads
// then run several times slower than one run alone (docs/BENCHMARKS.md, "Runs sharing a machine").
#pragma once

namespace rlm {

/// The environment variable through which a sweep tells its workers how many of them share the CPUs.
inline constexpr const char* kCpuShareVariable = "RLM_CPU_SHARE";

/// CPUs in this process's affinity mask (the hardware threads when it cannot be read); at least 1.
int usable_cpus();

/// usable_cpus() divided by RLM_CPU_SHARE (when set to a positive integer), rounded down; at least 1.
int cpu_share();

}  // namespace rlm
