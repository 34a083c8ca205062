// Where the fused ops that have CUDA kernels (kf_filter, memory/spiking_highway) run: always on the CPU, and on a
// CUDA device when this build compiled the kernels (RLM_HAVE_CUDA; without it their CUDA entry points are stubs that
// throw). Elsewhere their callers use the same computation in whole-tensor ops.
#pragma once
#include <c10/core/Device.h>

namespace rlm::scan {

inline bool fused_ops_run_on(const c10::Device& device) {
#ifdef RLM_HAVE_CUDA
  return device.is_cpu() || device.is_cuda();
#else
  return device.is_cpu();
#endif
}

}  // namespace rlm::scan
