// Counts the torch operators that compute, as a measure of kernel launches (issue 33, goal 2: a backend whose step or
// minibatch launches thousands of small kernels is bound by launches on a GPU, whatever its arithmetic). Counted are
// the leaf calls among ATen's operators, those inside which no other operator ran, less the ones that only make
// views or allocate (view, select, empty, ...): on a GPU each of the others is about one kernel. Every thread's
// calls count (autograd's backward runs on a device thread of its own on a GPU), so count one thing at a time.
#pragma once
#include <cstdint>

namespace rlm::nn {

class OpCounter {
 public:
  OpCounter();  ///< counting from now
  OpCounter(const OpCounter&) = delete;
  OpCounter& operator=(const OpCounter&) = delete;
  ~OpCounter();
  /// Computing operators since construction (or the last reset()).
  int64_t count() const;
  void reset();

 private:
  uint64_t handle_;
};

}  // namespace rlm::nn
