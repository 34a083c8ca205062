// The supervised sanity task shared by the backend tests: sequences of one-hot tokens, the label is the first token,
// read out at the last step through a Linear head. Trains with Adam and returns the held-out accuracy reached.
#pragma once
#include <torch/torch.h>

#include <catch2/catch.hpp>

#include "memory/memory.hpp"

namespace rlm::test {

/// Trains `memory` (built for input width `classes`) plus a Linear head for at most `max_updates` Adam steps of
/// batch 64, checking accuracy on a fresh batch every 100 steps and stopping once it reaches 0.99.
inline double learn_recall_first(memory::Memory& memory, int64_t classes, int64_t steps, int max_updates) {
  const int64_t batch = 64;
  torch::nn::Linear head(memory.output_size(), classes);
  std::vector<torch::Tensor> params = memory.parameters();
  for (const auto& p : head->parameters()) params.push_back(p);
  torch::optim::Adam optimiser(params, torch::optim::AdamOptions(3e-3));
  const auto starts = torch::zeros({steps, batch}, torch::kBool);
  const auto sample = [&] {
    auto tokens = torch::randint(classes, {steps, batch}, torch::kLong);
    return std::make_pair(torch::one_hot(tokens, classes).to(torch::kFloat32), tokens[0]);
  };
  const auto logits_of = [&](const torch::Tensor& x) {
    return head->forward(memory.forward(x, memory.initial_state(batch, torch::kCPU), starts).y[steps - 1]);
  };
  double accuracy = 0;
  for (int iteration = 0; iteration < max_updates; ++iteration) {
    auto [x, label] = sample();
    auto loss = torch::nn::functional::cross_entropy(logits_of(x), label);
    optimiser.zero_grad();
    loss.backward();
    optimiser.step();
    if (iteration % 100 == 99) {
      torch::NoGradGuard no_grad;
      auto [xe, le] = sample();
      accuracy = logits_of(xe).argmax(-1).eq(le).to(torch::kFloat32).mean().item<double>();
      if (accuracy >= 0.99) {
        WARN("reached accuracy " << accuracy << " after " << iteration + 1 << " updates");
        break;
      }
    }
  }
  return accuracy;
}

}  // namespace rlm::test
