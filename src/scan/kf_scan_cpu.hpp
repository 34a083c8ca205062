// kf_scan's CPU path (kf_scan_cpu.cpp): the filter run forward in time as one fused autograd op. kf_scan calls it for
// CPU float32 and float64 inputs, after checking them and resolving the initial belief.
#pragma once
#include <torch/torch.h>

#include "scan/kf_scan.hpp"

namespace rlm::scan {

/// init_mean, init_var: the belief before step 0, [B, N] (the reset belief already filled in where it applies).
KfScanOutput kf_scan_cpu(const KfScanInputs& in, const torch::Tensor& init_mean, const torch::Tensor& init_var);

}  // namespace rlm::scan
