// The one Catch2 main shared by every test binary (compiled once: catch.hpp's runner is slow to build), with one
// option of ours: --cpu-isa LEVEL (baseline, avx2 or avx512) runs the tests as on a CPU of that level
// (RLM_MAX_CPU_ISA=LEVEL, core/cpu_isa.hpp), so that ctest runs the SIMD kernels' tests once per level; where this CPU
// lacks the level (or RLM_MAX_CPU_ISA already caps it lower) it prints "LEVEL is not on this CPU: skipped" and runs
// nothing, which ctest reports as a skip, not a pass.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>

#include "core/cpu_isa.hpp"

int main(int argc, char* argv[]) {
  Catch::Session session;
  std::string level;
  session.cli(session.cli() | Catch::clara::Opt(level, "level")["--cpu-isa"](
                                  "run as on a CPU of this level (baseline, avx2, avx512); skipped where it lacks it"));
  if (const int status = session.applyCommandLine(argc, argv); status != 0) return status;
  if (!level.empty()) {
    const auto isa = rlm::parse_cpu_isa(level);
    if (!isa) {
      std::cerr << "--cpu-isa " << level << ": expected baseline, avx2 or avx512\n";
      return 2;
    }
    if (rlm::usable_cpu_isa() < *isa) {
      std::cout << level << " is not on this CPU: skipped\n";
      return 0;
    }
    setenv("RLM_MAX_CPU_ISA", level.c_str(), /*overwrite=*/1);
  }
  rlm::apply_max_cpu_isa_to_libraries();
  return session.run();
}
