// nn::tanh (nn/tanh.hpp): libmvec's tanhf on the CPU in float32 agrees with torch's tanh to float32 rounding, forward
// and backward, over the whole range (saturation, zero, tiny and non-finite inputs), in strided and empty tensors.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <limits>

#include "nn/tanh.hpp"

TEST_CASE("nn::tanh: equals torch's tanh to float32 rounding, values and gradients", "[memory][tanh][simd]") {
  torch::manual_seed(0);
  const float inf = std::numeric_limits<float>::infinity();
  auto special = torch::tensor({0.0f, -0.0f, 1e-30f, -1e-8f, 0.5f, -3.0f, 9.0f, 20.0f, -90.0f, inf, -inf});
  auto x = torch::cat({torch::randn({4099}) * 4, special}).requires_grad_(true);
  auto expected_x = x.detach().to(torch::kDouble).requires_grad_(true);
  auto y = rlm::nn::tanh(x);
  auto expected = torch::tanh(expected_x);
  CHECK((y.to(torch::kDouble) - expected).abs().max().item<double>() < 2e-7);
  CHECK(y[4099].item<float>() == 0.0f);  // exact where tanh is exact
  CHECK(y[-2].item<float>() == 1.0f);
  CHECK(y[-1].item<float>() == -1.0f);
  auto weights = torch::randn({x.size(0)});
  (y * weights).sum().backward();
  (expected * weights.to(torch::kDouble)).sum().backward();
  CHECK((x.grad().to(torch::kDouble) - expected_x.grad()).abs().max().item<double>() < 1e-6);

  auto strided = torch::randn({6, 10}).t();  // not contiguous: the result keeps the shape
  CHECK(torch::allclose(rlm::nn::tanh(strided), torch::tanh(strided), 1e-6, 1e-7));
  CHECK(rlm::nn::tanh(torch::empty({0, 3})).sizes() == torch::IntArrayRef({0, 3}));
  auto in_double = torch::randn({5}, torch::kDouble);  // other dtypes: torch's tanh itself
  CHECK(torch::equal(rlm::nn::tanh(in_double), torch::tanh(in_double)));
}
