// nn::linear_after_affine against the explicit composition linear(linear(read, w1, b1), w2, b2): outputs and the
// gradients of all five inputs, for a batch large enough to take the product w2·w1 and for one small enough to form
// the intermediate, with and without the biases.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "nn/linear.hpp"

namespace {

std::vector<torch::Tensor> outputs_and_grads(bool composed, const std::vector<torch::Tensor>& inputs) {
  std::vector<torch::Tensor> in;
  for (const auto& t : inputs) in.push_back(t.defined() ? t.clone().requires_grad_(true) : t);
  const auto y = composed ? torch::linear(torch::linear(in[0], in[1], in[2]), in[3], in[4])
                          : rlm::nn::linear_after_affine(in[0], in[1], in[2], in[3], in[4]);
  (y * torch::linspace(-1, 1, y.numel(), y.options()).view(y.sizes())).sum().backward();
  std::vector<torch::Tensor> result = {y.detach()};
  for (const auto& t : in) result.push_back(t.defined() ? t.grad() : t);
  return result;
}

}  // namespace

TEST_CASE("linear_after_affine equals the two layers applied in turn, gradients included", "[memory][linear]") {
  const char* names[] = {"y", "d_read", "d_w1", "d_b1", "d_w2", "d_b2"};
  torch::manual_seed(11);
  const auto f64 = torch::TensorOptions().dtype(torch::kFloat64);
  // [T, B] rows of width 24, through a 300-wide affine map, into 40 outputs: 512 rows take the product, 2 rows do not.
  for (const int64_t batch : {int64_t{2}, int64_t{512}}) {
    for (const bool biases : {true, false}) {
      INFO("rows " << 4 * batch << ", biases " << biases);
      const std::vector<torch::Tensor> inputs = {torch::randn({4, batch, 24}, f64), torch::randn({300, 24}, f64) / 5,
                                                 biases ? torch::randn({300}, f64) : torch::Tensor(),
                                                 torch::randn({40, 300}, f64) / 17,
                                                 biases ? torch::randn({40}, f64) : torch::Tensor()};
      const auto got = outputs_and_grads(false, inputs);
      const auto want = outputs_and_grads(true, inputs);
      for (size_t i = 0; i < got.size(); ++i) {
        INFO(names[i]);
        REQUIRE(got[i].defined() == want[i].defined());
        if (!got[i].defined()) continue;
        REQUIRE(got[i].sizes() == want[i].sizes());
        CHECK(torch::allclose(got[i], want[i], 1e-10, 1e-10));
      }
    }
  }
}

TEST_CASE("linear_after_affine without an affine map is the linear layer", "[memory][linear]") {
  torch::manual_seed(12);
  const auto x = torch::randn({3, 5, 8}), w = torch::randn({6, 8}), b = torch::randn({6});
  CHECK(torch::equal(rlm::nn::linear_after_affine(x, {}, {}, w, b), rlm::nn::linear(x, w, b)));
}
