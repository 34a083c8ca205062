#include "core/cpu_isa.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "core/error.hpp"

namespace rlm {

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512:
      return "avx512";
    case CpuIsa::avx2:
      return "avx2";
    case CpuIsa::baseline:
      break;
  }
  return "baseline";
}

std::optional<CpuIsa> parse_cpu_isa(std::string_view name) {
  for (const auto isa : {CpuIsa::baseline, CpuIsa::avx2, CpuIsa::avx512})
    if (name == cpu_isa_name(isa)) return isa;
  return std::nullopt;
}

CpuIsa cpu_isa() {
#if defined(__GNUC__) && defined(__x86_64__)
  // The same checks as the loader's choice among GCC's target clones (GCC 11+ names the levels).
  if (__builtin_cpu_supports("x86-64-v4")) return CpuIsa::avx512;
  if (__builtin_cpu_supports("x86-64-v3")) return CpuIsa::avx2;
#endif
  return CpuIsa::baseline;
}

CpuIsa max_cpu_isa() {
  const char* value = std::getenv("RLM_MAX_CPU_ISA");
  if (value == nullptr || *value == '\0') return CpuIsa::avx512;
  if (const auto isa = parse_cpu_isa(value)) return *isa;
  throw UsageError(fmt::format("RLM_MAX_CPU_ISA = '{}' in the environment: expected baseline, avx2 or avx512", value));
}

CpuIsa usable_cpu_isa() { return std::min(cpu_isa(), max_cpu_isa()); }

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "unknown";
}

void apply_max_cpu_isa_to_libraries() {
  const CpuIsa cap = max_cpu_isa();
  if (cap == CpuIsa::avx512) return;
  const bool avx2 = cap == CpuIsa::avx2;
  // Each library's own name for the level, or its lowest where it has nothing as low as SSE2.
  setenv("ONEDNN_MAX_CPU_ISA", avx2 ? "AVX2" : "SSE41", /*overwrite=*/0);
  setenv("MKL_ENABLE_INSTRUCTIONS", avx2 ? "AVX2" : "SSE4_2", 0);
  setenv("ATEN_CPU_CAPABILITY", avx2 ? "avx2" : "default", 0);
}

}  // namespace rlm
