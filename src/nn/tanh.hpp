// tanh on the CPU in float32 through glibc's vectorised tanhf (libmvec), as an autograd op.
//
// Why: torch's CPU tanh calls MKL's VML in its high-accuracy mode, about 2.2 ns per float on the dev VM (400 µs for
// a [20, 96, 96] tensor), where libmvec's 16-wide tanhf takes a tenth of that. STM takes the tanh of about 25k floats
// per sample and step (M^i for its gates, the item write, the SAM scores): 7.6% of its PPO time was VML's tanh.
// libmvec's tanhf is within a few ulp of the correctly rounded value; results agree with torch's to float32 rounding,
// not bitwise, and are the same from run to run on one machine. Elsewhere (CUDA, other dtypes) it is torch::tanh.
#pragma once
#include <torch/torch.h>

namespace rlm::nn {

/// y = tanh(x), with ∂x = ∂y ⊙ (1 − y²) in backward.
torch::Tensor tanh(const torch::Tensor& x);

}  // namespace rlm::nn
