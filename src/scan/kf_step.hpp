// One step of the KF layer's diagonal filter for one channel (KF paper Eqs. 4–6, C = I), and its adjoint: the
// arithmetic the CPU loops (kf_filter.cpp) and the CUDA kernels (kf_filter_cuda.cu) share.
#pragma once
#include "scan/host_device.hpp"

namespace rlm::scan {

/// The predict half of a step and its gain, from the belief (m_prev, p_prev) before it: the prior x⁻ = a m + βu,
/// P⁻ = a² P + q, and k = P⁻ / (P⁻ + r) with inv = 1 / (P⁻ + r).
template <class S>
struct KfPrediction {
  S prior_mean, prior_var, inv, gain;
};

template <class S>
RLM_HOST_DEVICE KfPrediction<S> kf_predict(S a, S bu, S q, S r, S m_prev, S p_prev) {
  const S prior_mean = a * m_prev + bu;
  const S prior_var = a * a * p_prev + q;
  const S inv = S(1) / (prior_var + r);
  return {prior_mean, prior_var, inv, prior_var * inv};
}

/// The posterior x⁺ = x⁻ + k (w − x⁻), P⁺ = (1 − k) P⁻ = r P⁻ / (P⁻ + r) of a step from the belief before it (bu = 0
/// without input).
template <class S>
struct KfPosterior {
  S mean, var;
};

template <class S>
RLM_HOST_DEVICE KfPosterior<S> kf_step(S a, S bu, S q, S w, S r, S m_prev, S p_prev) {
  const auto s = kf_predict(a, bu, q, r, m_prev, p_prev);
  return {s.prior_mean + s.gain * (w - s.prior_mean), r * s.prior_var * s.inv};
}

/// The step's gradients, and g_m, g_p carried to the belief before it (zero where it was the reset belief, a
/// constant).
template <class S>
struct KfStepAdjoint {
  S d_a, d_bu, d_q, d_w, d_r, g_m, g_p;
};

/// The adjoint of kf_step from g_m, g_p = ∂L/∂x⁺, ∂L/∂P⁺ of the step (everything that reaches them).
template <class S>
RLM_HOST_DEVICE KfStepAdjoint<S> kf_step_adjoint(S a, S bu, S q, S w, S r, S m_prev, S p_prev, S g_m, S g_p,
                                                 bool reset) {
  const auto s = kf_predict(a, bu, q, r, m_prev, p_prev);
  const S d_gain = g_m * (w - s.prior_mean) - g_p * s.prior_var;
  const S d_prior_mean = g_m * (S(1) - s.gain);
  const S d_prior_var = g_p * (S(1) - s.gain) + d_gain * r * s.inv * s.inv;
  return {d_prior_mean * m_prev + d_prior_var * S(2) * a * p_prev,
          d_prior_mean,
          d_prior_var,
          g_m * s.gain,
          -d_gain * s.prior_var * s.inv * s.inv,
          reset ? S(0) : d_prior_mean * a,
          reset ? S(0) : d_prior_var * a * a};
}

}  // namespace rlm::scan
