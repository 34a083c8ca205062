// kf_scan's fused path (kf_filter.cpp): the filter run forward in time as one autograd op, by CPU loops or, on a GPU,
// CUDA kernels (kf_filter_cuda.cu). kf_scan calls it for float32 and float64 inputs on the CPU, and on CUDA devices
// where the build has the kernels, after checking them and resolving the initial belief.
#pragma once
#include <torch/torch.h>

#include "scan/kf_scan.hpp"

namespace rlm::scan {

/// init_mean, init_var: the belief before step 0, [B, N] (the reset belief already filled in where it applies).
KfScanOutput kf_filter(const KfScanInputs& in, const torch::Tensor& init_mean, const torch::Tensor& init_var);

}  // namespace rlm::scan
