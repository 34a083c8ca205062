// MultiCategorical: log-probs, entropy and KL summed over components, checked against direct formulas.
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "agents/multi_categorical.hpp"

using rlm::agents::MultiCategorical;

TEST_CASE("multi-categorical: log_prob, entropy, kl and sampling", "[agents]") {
  torch::manual_seed(0);
  const std::vector<int64_t> nvec = {3, 2};
  auto logits = torch::randn({4, 5});
  auto other_logits = torch::randn({4, 5});
  MultiCategorical d(logits, nvec), o(other_logits, nvec);
  auto actions = torch::tensor({{0, 1}, {2, 0}, {1, 1}, {2, 1}}, torch::kInt64);

  auto p0 = torch::softmax(logits.narrow(1, 0, 3), 1), p1 = torch::softmax(logits.narrow(1, 3, 2), 1);
  auto q0 = torch::softmax(other_logits.narrow(1, 0, 3), 1), q1 = torch::softmax(other_logits.narrow(1, 3, 2), 1);
  for (int i = 0; i < 4; ++i) {
    const auto a0 = actions[i][0].item<int64_t>(), a1 = actions[i][1].item<int64_t>();
    const double expected = std::log(p0[i][a0].item<double>()) + std::log(p1[i][a1].item<double>());
    CHECK(d.log_prob(actions)[i].item<double>() == Approx(expected).epsilon(1e-5));
  }
  auto h = -(p0 * p0.log()).sum(1) - (p1 * p1.log()).sum(1);
  CHECK(torch::allclose(d.entropy(), h, 1e-5, 1e-5));
  auto kl = (p0 * (p0.log() - q0.log())).sum(1) + (p1 * (p1.log() - q1.log())).sum(1);
  CHECK(torch::allclose(d.kl(o), kl, 1e-5, 1e-5));
  CHECK(d.kl(d).abs().max().item<double>() < 1e-6);

  // Sampling follows the probabilities (a statistical check that can fail): component 0 of row 0.
  auto gen = at::detail::createCPUGenerator(7);
  auto many = MultiCategorical(logits[0].unsqueeze(0).expand({20000, 5}).contiguous(), nvec).sample(gen);
  for (int64_t k = 0; k < 3; ++k) {
    const double freq = (many.select(1, 0) == k).to(torch::kFloat64).mean().item<double>();
    CHECK(freq == Approx(p0[0][k].item<double>()).margin(0.015));
  }
  CHECK(torch::equal(d.mode().select(1, 0), p0.argmax(1)));
}
