// A CPU build's CudaGraph: nothing can be captured (the CUDA build's is nn/cuda_graph.cu).
#include "nn/cuda_graph.hpp"

#include <c10/util/Exception.h>

namespace rlm::nn {

#ifndef RLM_HAVE_CUDA
struct CudaGraph::Impl {};

bool CudaGraph::supported() { return false; }

CudaGraph::CudaGraph() = default;
CudaGraph::~CudaGraph() = default;

std::vector<at::Tensor> CudaGraph::capture(const std::function<std::vector<at::Tensor>()>&) {
  TORCH_CHECK(false, "CudaGraph: this build has no CUDA support (configure with RLM_CUDA=ON)");
  return {};
}

void CudaGraph::replay() { TORCH_CHECK(false, "CudaGraph: this build has no CUDA support"); }
#endif

}  // namespace rlm::nn
