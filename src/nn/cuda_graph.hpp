// A fixed-shape computation captured once as a CUDA graph and replayed (issue 33). Acting steps the model with T = 1
// for every env step, dozens of small kernels each launched from the host, so a GPU rollout is bound by launches
// (175–706 µs per batch-1 step on an H200, docs/BENCHMARKS.md); a graph launches them all at once.
// The caller owns the static inputs that the captured work reads: it copies each step's values into them, replays,
// and reads the outputs, which every replay overwrites in place. Only for work that neither synchronises with the
// host nor copies from it and draws no random numbers: capture() throws where an op cannot be captured.
#pragma once
#include <ATen/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

namespace rlm::nn {

class CudaGraph {
 public:
  /// Whether this build can capture (one built with the CUDA kernels, RLM_HAVE_CUDA).
  static bool supported();

  CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  ~CudaGraph();

  /// Runs `step` a few times on a side stream (cuBLAS and the caching allocator set themselves up outside the
  /// capture, as torch.cuda.graphs does it), then captures one call of it on that stream, in thread-local capture mode
  /// (runs on other threads of the process, `rlm sweep --in-process`, go on meanwhile). Returns the captured call's
  /// outputs: the tensors replay() rewrites. Throws c10::Error where `step` cannot be captured; the graph is then
  /// unusable and the stream no longer capturing.
  std::vector<at::Tensor> capture(const std::function<std::vector<at::Tensor>()>& step);
  /// Launches the captured work on the current stream.
  void replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlm::nn
