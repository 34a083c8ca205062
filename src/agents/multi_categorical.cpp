#include "agents/multi_categorical.hpp"

#include <numeric>

namespace rlm::agents {

int64_t num_logits(const std::vector<int64_t>& nvec) { return std::accumulate(nvec.begin(), nvec.end(), int64_t{0}); }

MultiCategorical::MultiCategorical(const torch::Tensor& logits, const std::vector<int64_t>& nvec) {
  TORCH_CHECK(logits.size(-1) == num_logits(nvec), "MultiCategorical: logits do not match the action space");
  int64_t offset = 0;
  for (int64_t n : nvec) {
    log_probs_.push_back(torch::log_softmax(logits.narrow(-1, offset, n), -1));
    offset += n;
  }
}

torch::Tensor MultiCategorical::sample(const torch::Generator& generator) const {
  std::vector<torch::Tensor> parts;
  for (const auto& lp : log_probs_) {
    auto probs = lp.exp().reshape({-1, lp.size(-1)});
    auto s = torch::multinomial(probs, 1, /*replacement=*/false, generator);
    auto shape = lp.sizes().vec();
    shape.back() = 1;
    parts.push_back(s.reshape(shape));
  }
  return torch::cat(parts, -1);
}

torch::Tensor MultiCategorical::mode() const {
  std::vector<torch::Tensor> parts;
  for (const auto& lp : log_probs_) parts.push_back(lp.argmax(-1, /*keepdim=*/true));
  return torch::cat(parts, -1);
}

torch::Tensor MultiCategorical::log_prob(const torch::Tensor& actions) const {
  torch::Tensor total;
  for (size_t i = 0; i < log_probs_.size(); ++i) {
    auto lp = log_probs_[i].gather(-1, actions.narrow(-1, static_cast<int64_t>(i), 1)).squeeze(-1);
    total = total.defined() ? total + lp : lp;
  }
  return total;
}

torch::Tensor MultiCategorical::entropy() const {
  torch::Tensor total;
  for (const auto& lp : log_probs_) {
    auto h = -(lp.exp() * lp).sum(-1);
    total = total.defined() ? total + h : h;
  }
  return total;
}

torch::Tensor MultiCategorical::kl(const MultiCategorical& other) const {
  torch::Tensor total;
  for (size_t i = 0; i < log_probs_.size(); ++i) {
    const auto& p = log_probs_[i];
    auto k = (p.exp() * (p - other.log_probs_[i])).sum(-1);
    total = total.defined() ? total + k : k;
  }
  return total;
}

}  // namespace rlm::agents
