// Kernels compiled for several x86 instruction sets, chosen at run time by the CPU they run on.
//
// Why: the build targets baseline x86-64 (SSE2, 4 floats per instruction) so that one binary runs on any x86 machine,
// but the fused scans' row loops are plain arithmetic over H contiguous floats that GCC vectorises to whatever the
// target allows: AVX-512 does 16 per instruction, AVX2 with FMA 8. simd::dispatch<kernel>(args) calls an
// RLM_ALWAYS_INLINE function compiled three times (x86-64-v4: AVX-512; x86-64-v3: AVX2 + FMA; baseline), the best one
// this CPU has, capped by RLM_MAX_CPU_ISA (core/cpu_isa.hpp): GCC's target_clones would pick the same but only by the
// CPU, at load time, so a machine could never run its lower clones, and the suite could not test them. Helpers a
// kernel calls must be inlined into it (RLM_ALWAYS_INLINE) to be compiled for its instruction set. Results may differ
// between machines or levels in the last bits (fused multiply-add, vector widths in reductions) and are the same from
// run to run at one level.
#pragma once

#include "core/cpu_isa.hpp"

#if defined(__GNUC__)
#define RLM_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define RLM_ALWAYS_INLINE inline
#endif

// glibc's vector exp and tanh (libmvec, linked through libm): with the simd attribute GCC turns the calls in a
// vectorised loop into libmvec's 16-, 8- or 4-wide versions, as <math.h> itself declares them under -ffast-math,
// which the build does not use. tanhf's vector versions came with glibc 2.35.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#include <cmath>
extern "C" float expf(float) noexcept __attribute__((__simd__("notinbranch")));
extern "C" double exp(double) noexcept __attribute__((__simd__("notinbranch")));
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 35)
extern "C" float tanhf(float) noexcept __attribute__((__simd__("notinbranch")));
#endif
#endif

#include <cstdint>

namespace rlm::simd {

/// The level the kernels run at: usable_cpu_isa(), read once per process.
inline CpuIsa kernel_isa() {
  static const CpuIsa isa = usable_cpu_isa();
  return isa;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(RLM_NO_SIMD_CLONES)
template <auto Kernel, class... A>
__attribute__((target("arch=x86-64-v4"))) auto run_avx512(A... a) {
  return Kernel(a...);
}
template <auto Kernel, class... A>
__attribute__((target("arch=x86-64-v3"))) auto run_avx2(A... a) {
  return Kernel(a...);
}

/// Kernel(a...), compiled for the instruction set kernel_isa() names. Kernel: an RLM_ALWAYS_INLINE function (a
/// template instance where it is overloaded, e.g. kernel<float>).
template <auto Kernel, class... A>
auto dispatch(A... a) {
  switch (kernel_isa()) {
    case CpuIsa::avx512:
      return run_avx512<Kernel>(a...);
    case CpuIsa::avx2:
      return run_avx2<Kernel>(a...);
    case CpuIsa::baseline:
      break;
  }
  return Kernel(a...);
}
#else
template <auto Kernel, class... A>
auto dispatch(A... a) {
  return Kernel(a...);
}
#endif

/// Independent partial sums for a row reduction inside a cloned kernel: one running sum is a chain of dependent
/// additions that the compiler must not reorder (strict floating point), so it would stay scalar; kLanes<S> sums
/// (one AVX-512 register of S), each taking every kLanes-th term and added in a fixed order at the end, vectorise and
/// keep the result deterministic.
template <class S>
constexpr int64_t kLanes = 64 / static_cast<int64_t>(sizeof(S));

/// tail_sum plus the kLanes<S> partial sums, in order.
template <class S>
RLM_ALWAYS_INLINE S add_lanes(S tail_sum, const S* lanes) {
  for (int64_t l = 0; l < kLanes<S>; ++l) tail_sum += lanes[l];
  return tail_sum;
}

}  // namespace rlm::simd
