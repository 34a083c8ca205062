// The x86-64 instruction-set levels rlm's own CPU kernels are compiled for, the level this CPU has, and a cap on it.
//
// Why a cap: one binary picks its code by the CPU it runs on (rlm's cloned kernels, scan/simd_clones.hpp; oneDNN, MKL
// and ATen each by their own checks), so a machine runs only its own CPU's paths. RLM_MAX_CPU_ISA=avx2 or baseline
// runs a machine as a CPU without what lies above would run it: rlm's kernels take that level's clones, bf16
// products count as unavailable, and apply_max_cpu_isa_to_libraries() caps oneDNN, MKL and ATen the same way
// (ONEDNN_MAX_CPU_ISA, MKL_ENABLE_INSTRUCTIONS, ATEN_CPU_CAPABILITY, unless already set). The test suite runs every
// clone this way, and an AVX-512 machine can time what an AVX2-only one would do.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace rlm {

/// The levels of the cloned kernels, in order: x86-64 (SSE2), x86-64-v3 (AVX2, FMA, BMI, F16C), x86-64-v4 (AVX-512
/// F, BW, CD, DQ and VL), as GCC names them.
enum class CpuIsa { baseline = 0, avx2 = 1, avx512 = 2 };

/// "baseline", "avx2" or "avx512".
const char* cpu_isa_name(CpuIsa isa);
std::optional<CpuIsa> parse_cpu_isa(std::string_view name);

/// The highest level this CPU has (baseline off x86-64).
CpuIsa cpu_isa();

/// The cap RLM_MAX_CPU_ISA sets (avx512, i.e. none, when unset). Throws UsageError, naming the variable and the
/// accepted values, for any other value.
CpuIsa max_cpu_isa();

/// min(cpu_isa(), max_cpu_isa()): the level rlm's kernels run at and the one CPU feature checks see.
CpuIsa usable_cpu_isa();

/// The CPU's model name as /proc/cpuinfo gives it ("unknown" where it does not), for benchmark reports.
std::string cpu_model_name();

/// Under RLM_MAX_CPU_ISA below avx512: sets oneDNN's, MKL's and ATen's own caps to match, where the environment does
/// not set them already. Must run before the libraries' first use (they read these once): the start of main().
void apply_max_cpu_isa_to_libraries();

}  // namespace rlm
