// Kernels compiled for several x86 instruction sets, chosen at load time by the CPU they run on.
//
// Why: the build targets baseline x86-64 (SSE2, 4 floats per instruction) so that one binary runs on any x86 machine,
// but the fused scans' row loops are plain arithmetic over H contiguous floats that GCC vectorises to whatever the
// target allows: AVX-512 does 16 per instruction, AVX2 with FMA 8. A function marked RLM_SIMD_CLONES is compiled three
// times (x86-64-v4: AVX-512; x86-64-v3: AVX2 + FMA; baseline) and the dynamic loader binds each call to the best one
// the CPU has (GCC's target_clones, an ifunc). Helpers it calls must be inlined into it (RLM_ALWAYS_INLINE) to be
// compiled for its instruction set. Results may differ between machines in the last bits (fused multiply-add, vector
// widths in reductions) and are the same from run to run on one machine.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(RLM_NO_SIMD_CLONES)
#define RLM_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RLM_SIMD_CLONES
#endif

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
