#include "scan/shm_scan.hpp"

#include <vector>

#include "scan/shm_scan_kernels.hpp"

namespace rlm::scan {
namespace {

struct Inputs {
  torch::Tensor theta, vc, eta, v, k, q, m0, starts;  // contiguous
};

Inputs contiguous_inputs(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                         const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q,
                         const torch::Tensor& m0, const torch::Tensor& starts) {
  return {theta.contiguous(), vc.contiguous(), eta.contiguous(), v.contiguous(),
          k.contiguous(),     q.contiguous(),  m0.contiguous(),  starts.defined() ? starts.contiguous() : starts};
}

void check_shm_inputs(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                      const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q, const torch::Tensor& m0,
                      const torch::Tensor& starts) {
  TORCH_CHECK(theta.dim() == 3, "shm_scan: theta must be [T, B, H], got ", theta.sizes());
  for (const auto* t : {&vc, &v, &k, &q})
    TORCH_CHECK(t->sizes() == theta.sizes(), "shm_scan: vc, v, k and q must have theta's shape ", theta.sizes(),
                ", got ", t->sizes());
  const int64_t steps = theta.size(0), batch = theta.size(1), size = theta.size(2);
  TORCH_CHECK(eta.dim() == 2 && eta.size(0) == steps && eta.size(1) == batch, "shm_scan: eta must be [T, B], got ",
              eta.sizes());
  TORCH_CHECK(m0.dim() == 3 && m0.size(0) == batch && m0.size(1) == size && m0.size(2) == size,
              "shm_scan: m0 must be [B, H, H], got ", m0.sizes());
  const auto type = theta.scalar_type();
  TORCH_CHECK(type == torch::kFloat32 || type == torch::kFloat64, "shm_scan: dtype must be float32 or float64");
  for (const auto* t : {&vc, &eta, &v, &k, &q, &m0}) {
    TORCH_CHECK(t->scalar_type() == type, "shm_scan: every input must share theta's dtype");
    TORCH_CHECK(t->device() == theta.device(), "shm_scan: every input must be on theta's device");
  }
  if (starts.defined())
    TORCH_CHECK(starts.scalar_type() == torch::kBool && starts.dim() == 2 && starts.size(0) == steps &&
                    starts.size(1) == batch && starts.device() == theta.device(),
                "shm_scan: starts must be bool [T, B] on theta's device, got ", starts.sizes());
}

class ShmScanFunction : public torch::autograd::Function<ShmScanFunction> {
 public:
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& theta,
                                              const torch::Tensor& vc, const torch::Tensor& eta, const torch::Tensor& v,
                                              const torch::Tensor& k, const torch::Tensor& q, const torch::Tensor& m0,
                                              const torch::Tensor& resets, double clamp) {
    const torch::Tensor starts = resets.numel() > 0 ? resets : torch::Tensor();
    const Inputs in = contiguous_inputs(theta, vc, eta, v, k, q, m0, starts);
    const int64_t steps = theta.size(0), batch = theta.size(1), size = theta.size(2);
    auto y = torch::empty({steps, batch, size}, theta.options());
    auto m_last = torch::empty({batch, size, size}, theta.options());
    const int64_t chunk = theta.is_cuda() ? kShmChunkCuda : kShmChunkCpu;
    auto checkpoints = torch::empty({(steps + chunk - 1) / chunk, batch, size, size}, theta.options());
    if (theta.is_cuda()) {
      shm_scan_cuda_forward(in.theta, in.vc, in.eta, in.v, in.k, in.q, in.m0, in.starts, clamp, chunk, y, m_last,
                            checkpoints);
    } else {
      shm_scan_cpu_forward(in.theta, in.vc, in.eta, in.v, in.k, in.q, in.m0, in.starts, clamp, y, m_last, checkpoints);
    }
    ctx->save_for_backward({in.theta, in.vc, in.eta, in.v, in.k, in.q, in.m0, checkpoints});
    ctx->saved_data["has_starts"] = starts.defined();
    if (starts.defined()) ctx->saved_data["starts"] = in.starts;
    ctx->saved_data["clamp"] = clamp;
    return {y, m_last};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    Inputs in{saved[0], saved[1], saved[2], saved[3], saved[4], saved[5], saved[6], torch::Tensor()};
    if (ctx->saved_data["has_starts"].toBool()) in.starts = ctx->saved_data["starts"].toTensor();
    const torch::Tensor& checkpoints = saved[7];
    const double clamp = ctx->saved_data["clamp"].toDouble();
    torch::Tensor grad_y = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(in.theta);
    torch::Tensor grad_m_last = grads[1].defined() ? grads[1].contiguous() : torch::Tensor();
    auto d_theta = torch::empty_like(in.theta), d_vc = torch::empty_like(in.vc), d_eta = torch::empty_like(in.eta);
    auto d_v = torch::empty_like(in.v), d_k = torch::empty_like(in.k), d_q = torch::empty_like(in.q);
    auto d_m0 = torch::empty_like(in.m0);
    if (in.theta.is_cuda()) {
      shm_scan_cuda_backward(in.theta, in.vc, in.eta, in.v, in.k, in.q, in.starts, clamp, kShmChunkCuda, checkpoints,
                             grad_y, grad_m_last, d_theta, d_vc, d_eta, d_v, d_k, d_q, d_m0);
    } else {
      shm_scan_cpu_backward(in.theta, in.vc, in.eta, in.v, in.k, in.q, in.starts, clamp, checkpoints, grad_y,
                            grad_m_last, d_theta, d_vc, d_eta, d_v, d_k, d_q, d_m0);
    }
    return {d_theta, d_vc, d_eta, d_v, d_k, d_q, d_m0, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

ShmScanOutput shm_scan(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                       const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q, const torch::Tensor& m0,
                       const torch::Tensor& starts, double state_clamp) {
  check_shm_inputs(theta, vc, eta, v, k, q, m0, starts);
  if (theta.numel() == 0) return {torch::empty_like(theta), m0};  // T, B or H = 0 (no kernel takes an empty grid)
  // Autograd functions cannot take undefined tensors: "no resets" travels as an empty tensor.
  const auto resets = starts.defined() ? starts : torch::empty({0}, theta.options().dtype(torch::kBool));
  auto out = ShmScanFunction::apply(theta, vc, eta, v, k, q, m0, resets, state_clamp);
  return {out[0], out[1]};
}

ShmScanOutput shm_scan_reference(const torch::Tensor& theta, const torch::Tensor& vc, const torch::Tensor& eta,
                                 const torch::Tensor& v, const torch::Tensor& k, const torch::Tensor& q,
                                 const torch::Tensor& m0, const torch::Tensor& starts, double state_clamp) {
  check_shm_inputs(theta, vc, eta, v, k, q, m0, starts);
  torch::Tensor m = m0;
  std::vector<torch::Tensor> ys;
  for (int64_t t = 0; t < theta.size(0); ++t) {
    auto calibration = 1 + torch::tanh(theta[t].unsqueeze(2) * vc[t].unsqueeze(1));  // [B, H, H]
    auto update = eta[t].view({-1, 1, 1}) * v[t].unsqueeze(2) * k[t].unsqueeze(1);
    torch::Tensor carried = m;
    if (starts.defined()) carried = carried * (~starts[t]).view({-1, 1, 1}).to(m.scalar_type());
    m = calibration * carried + update;
    if (state_clamp > 0) m = m.clamp(-state_clamp, state_clamp);
    ys.push_back(torch::matmul(m, q[t].unsqueeze(2)).squeeze(2));
  }
  return {ys.empty() ? torch::empty_like(theta) : torch::stack(ys), m};
}

#ifndef RLM_HAVE_CUDA
void shm_scan_cuda_forward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                           const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&, double, int64_t,
                           at::Tensor&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "shm_scan: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
void shm_scan_cuda_backward(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const at::Tensor&, const at::Tensor&, const at::Tensor&, double, int64_t, const at::Tensor&,
                            const at::Tensor&, const at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&,
                            at::Tensor&, at::Tensor&, at::Tensor&) {
  TORCH_CHECK(false, "shm_scan: this build has no CUDA kernels (configure with RLM_CUDA=ON)");
}
#endif

}  // namespace rlm::scan
