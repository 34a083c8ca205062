// The spiking-gate cell's two highways (spiking paper Eqs. 9, 20) as one autograd op:
//   h_t = a_t h_{t−1} + b_t   (complex; h_{t−1} = 0 where step t starts an episode, h_{−1} = h0)
//   a_t = c_t s^in_t + (1 − s^in_t),   b_t = (W_x x_t) s^in_t
//   ŷ_t = s^out_t h_t + (1 − s^out_t) W_x x_t
// It is one pass forward and one reverse pass backward over [T, B, N_h] (on a GPU one kernel each way,
// spiking_highway_cuda.cu), in place of ~20 whole-tensor ops and a complex linear_scan whose intermediates autograd
// would keep and walk again. spiking_highway_reference is the same computation in whole-tensor ops (any device; the
// cell uses it where spiking_highway does not run, the tests as the oracle).
#pragma once
#include <torch/torch.h>

namespace rlm::memory {

struct SpikingHighwayOutput {
  torch::Tensor y_hat;   ///< [T, B, 2·N_h]: Re ŷ, then Im ŷ (the input layout of W_y)
  torch::Tensor hidden;  ///< [T, B, N_h, 2]: h_t as (Re, Im) pairs (view_as_real layout)
};

/// wx_re, wx_im, c_re, c_im, s_in, s_out: [T, B, N_h] real (views and broadcasts allowed); h0: [B, N_h, 2];
/// starts: [T, B] bool. Float32 or float64, where scan::fused_ops_run_on the device; differentiable in every tensor
/// input.
SpikingHighwayOutput spiking_highway(const torch::Tensor& wx_re, const torch::Tensor& wx_im, const torch::Tensor& c_re,
                                     const torch::Tensor& c_im, const torch::Tensor& s_in, const torch::Tensor& s_out,
                                     const torch::Tensor& h0, const torch::Tensor& starts);

/// The same with whole-tensor ops and linear_scan (any device and dtype linear_scan takes).
SpikingHighwayOutput spiking_highway_reference(const torch::Tensor& wx_re, const torch::Tensor& wx_im,
                                               const torch::Tensor& c_re, const torch::Tensor& c_im,
                                               const torch::Tensor& s_in, const torch::Tensor& s_out,
                                               const torch::Tensor& h0, const torch::Tensor& starts);

}  // namespace rlm::memory
