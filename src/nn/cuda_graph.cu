// CudaGraph on ATen's CUDAGraph (nn/cuda_graph.hpp); compiled by nvcc with the CUDA kernels (RLM_HAVE_CUDA), while
// nn/cuda_graph.cpp holds what a CPU build has instead.
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include "nn/cuda_graph.hpp"

namespace rlm::nn {

struct CudaGraph::Impl {
  at::cuda::CUDAGraph graph;
};

bool CudaGraph::supported() { return true; }

CudaGraph::CudaGraph() = default;
CudaGraph::~CudaGraph() = default;

std::vector<at::Tensor> CudaGraph::capture(const std::function<std::vector<at::Tensor>()>& step) {
  impl_ = std::make_unique<Impl>();
  const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream();
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  at::cuda::CUDAEvent inputs_ready;
  inputs_ready.record(caller);
  inputs_ready.block(side);  // the side stream sees what the caller wrote into the inputs
  std::vector<at::Tensor> outputs;
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    for (int i = 0; i < 3; ++i) step();  // warm-up: three, as torch.cuda.make_graphed_callables does
    impl_->graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
      outputs = step();
    } catch (...) {
      // An op that cannot be captured threw mid-capture: end the capture, so that the stream works again (the
      // allocator's private pool for it stays reserved: a one-time loss), clear the error, and report.
      cudaGraph_t partial = nullptr;
      if (cudaStreamEndCapture(side.stream(), &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
      (void)cudaGetLastError();
      impl_.reset();
      throw;
    }
    impl_->graph.capture_end();
  }
  at::cuda::CUDAEvent captured;
  captured.record(side);
  captured.block(caller);
  return outputs;
}

void CudaGraph::replay() {
  TORCH_CHECK(impl_ != nullptr, "CudaGraph::replay: nothing captured");
  impl_->graph.replay();
}

}  // namespace rlm::nn
