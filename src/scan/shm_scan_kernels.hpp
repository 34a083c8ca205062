// Internal to src/scan: the CPU and CUDA entry points of the fused SHM op (shm_scan_cpu.cpp; shm_scan_cuda.cu, with
// stubs in shm_scan.cpp when the build has no CUDA). Every tensor is contiguous; `chunk` is the spacing of the stored
// states in `checkpoints`
// ([ceil(T / chunk), B, H, H], checkpoints[c] = the state before step c·chunk).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace rlm::scan {

/// Time steps between stored states: backward recomputes the states inside a chunk from the one before it, so the
/// op keeps T/chunk states of [B, H, H] instead of T. The CUDA kernel holds a chunk of states per thread: smaller.
constexpr int64_t kShmChunkCpu = 32;
constexpr int64_t kShmChunkCuda = 16;

void shm_scan_cpu_forward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                          const at::Tensor& k, const at::Tensor& q, const at::Tensor& m0, const at::Tensor& starts,
                          double clamp, at::Tensor& y, at::Tensor& m_last, at::Tensor& checkpoints);

/// grad_m_last may be undefined (no gradient flows into the final state).
void shm_scan_cpu_backward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                           const at::Tensor& k, const at::Tensor& q, const at::Tensor& starts, double clamp,
                           const at::Tensor& checkpoints, const at::Tensor& grad_y, const at::Tensor& grad_m_last,
                           at::Tensor& d_theta, at::Tensor& d_vc, at::Tensor& d_eta, at::Tensor& d_v, at::Tensor& d_k,
                           at::Tensor& d_q, at::Tensor& d_m0);

void shm_scan_cuda_forward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                           const at::Tensor& k, const at::Tensor& q, const at::Tensor& m0, const at::Tensor& starts,
                           double clamp, int64_t chunk, at::Tensor& y, at::Tensor& m_last, at::Tensor& checkpoints);

/// grad_m_last may be undefined (no gradient flows into the final state).
void shm_scan_cuda_backward(const at::Tensor& theta, const at::Tensor& vc, const at::Tensor& eta, const at::Tensor& v,
                            const at::Tensor& k, const at::Tensor& q, const at::Tensor& starts, double clamp,
                            int64_t chunk, const at::Tensor& checkpoints, const at::Tensor& grad_y,
                            const at::Tensor& grad_m_last, at::Tensor& d_theta, at::Tensor& d_vc, at::Tensor& d_eta,
                            at::Tensor& d_v, at::Tensor& d_k, at::Tensor& d_q, at::Tensor& d_m0);

}  // namespace rlm::scan
