// simd::dispatch runs the clone that RLM_MAX_CPU_ISA and the CPU allow (scan/simd_clones.hpp). ctest runs the [simd]
// tests once per level (simd_clones.<level>.*, skipped where the CPU lacks it); this file checks that the level is the
// one the variable asks for and that the code which runs is compiled for it: the AVX2 and AVX-512 clones fuse a·b + c
// into one FMA instruction (one rounding), the baseline clone has no FMA and rounds a·b first.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>

#include "core/cpu_isa.hpp"
#include "scan/simd_clones.hpp"

namespace {

RLM_ALWAYS_INLINE float multiply_add(float a, float b, float c) { return a * b + c; }

}  // namespace

TEST_CASE("simd: the kernels run at the level RLM_MAX_CPU_ISA caps this CPU's to", "[scan][simd]") {
  using rlm::CpuIsa;
  const char* cap = std::getenv("RLM_MAX_CPU_ISA");
  const CpuIsa expected = cap != nullptr ? std::min(rlm::cpu_isa(), *rlm::parse_cpu_isa(cap)) : rlm::cpu_isa();
  INFO("this CPU: " << rlm::cpu_isa_name(rlm::cpu_isa()) << ", RLM_MAX_CPU_ISA: " << (cap ? cap : "(unset)"));
  CHECK(rlm::simd::kernel_isa() == expected);

  // a·b is not a float: 1 + 2^-12 squared is 1 + 2^-11 + 2^-24, whose last term a float next to 1 cannot hold.
  volatile float a = 1.0f + std::ldexp(1.0f, -12), c = -1.0f;
  const float rounded_first = static_cast<float>(a * a) + c;  // volatile: no contraction across the cast
  const float fused = std::fma(a, a, c);
  REQUIRE(rounded_first != fused);
  const float got =
      rlm::simd::dispatch<multiply_add>(static_cast<float>(a), static_cast<float>(a), static_cast<float>(c));
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
  CHECK(got == (expected == CpuIsa::baseline ? rounded_first : fused));
#else
  CHECK((got == rounded_first || got == fused));
#endif
}
