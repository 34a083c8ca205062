// One step of the spiking cell's two highways for one channel (spiking paper Eqs. 9, 20), and its adjoint: the
// arithmetic the CPU loops (spiking_highway.cpp) and the CUDA kernels (spiking_highway_cuda.cu) share. Complex
// numbers are (Re, Im) pairs.
#pragma once
#include "scan/host_device.hpp"

namespace rlm::memory {

/// h_t and ŷ_t.
template <class S>
struct HighwayStep {
  S h_re, h_im, y_re, y_im;
};

/// h = a h_prev + b with a = c s_in + (1 − s_in), b = (W_x x) s_in; ŷ = s_out h + (1 − s_out) W_x x. h_prev is 0
/// where the step starts an episode (the caller passes it so).
template <class S>
RLM_HOST_DEVICE HighwayStep<S> highway_step(S xr, S xi, S cr, S ci, S si, S so, S prev_re, S prev_im) {
  const S a_re = cr * si + (S(1) - si), a_im = ci * si;
  const S h_re = (a_re * prev_re - a_im * prev_im) + xr * si;
  const S h_im = (a_re * prev_im + a_im * prev_re) + xi * si;
  return {h_re, h_im, so * h_re + (S(1) - so) * xr, so * h_im + (S(1) - so) * xi};
}

/// The step's gradients, and g = ∂L/∂h_{t−1} carried back (zero across a start).
template <class S>
struct HighwayStepAdjoint {
  S d_wx_re, d_wx_im, d_c_re, d_c_im, d_s_in, d_s_out, g_re, g_im;
};

/// The adjoint of highway_step. g: ∂L/∂h_t gathered from ŷ_t (gy), from the `hidden` output (gh) and from step t + 1
/// (carried); h: h_t; prev: h_{t−1} as the forward used it (0 where `cut`). ∂b = g, ∂a = g · conj(h_{t−1}), and the
/// carried gradient is conj(a_t) · g.
template <class S>
RLM_HOST_DEVICE HighwayStepAdjoint<S> highway_step_adjoint(S xr, S xi, S cr, S ci, S si, S so, S h_re, S h_im,
                                                           S prev_re, S prev_im, S gy_re, S gy_im, S gh_re, S gh_im,
                                                           S carried_re, S carried_im, bool cut) {
  const S g_re = carried_re + gh_re + so * gy_re;
  const S g_im = carried_im + gh_im + so * gy_im;
  const S da_re = g_re * prev_re + g_im * prev_im, da_im = g_im * prev_re - g_re * prev_im;
  const S a_re = cr * si + (S(1) - si), a_im = ci * si;
  return {g_re * si + (S(1) - so) * gy_re,
          g_im * si + (S(1) - so) * gy_im,
          da_re * si,
          da_im * si,
          da_re * (cr - S(1)) + da_im * ci + g_re * xr + g_im * xi,
          gy_re * (h_re - xr) + gy_im * (h_im - xi),
          cut ? S(0) : a_re * g_re + a_im * g_im,
          cut ? S(0) : a_re * g_im - a_im * g_re};
}

}  // namespace rlm::memory
