// The off-policy loss terms against values worked out by hand on tiny tensors (off_policy_losses.hpp), the
// squashed Gaussian's log-density against a numerical density, and the target-network updates.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "agents/off_policy_losses.hpp"
#include "agents/recurrent_networks.hpp"

using namespace rlm::agents;

namespace {
torch::Tensor t(std::initializer_list<float> values, std::vector<int64_t> shape) {
  return torch::tensor(std::vector<float>(values)).reshape(shape);
}
double v(const torch::Tensor& x) { return x.item<double>(); }
}  // namespace

TEST_CASE("off-policy losses: critic loss divides by the real steps only", "[agents][off_policy_losses]") {
  const auto q = t({1, 2, 3, 4}, {2, 2});
  const auto y = t({0, 2, 1, 0}, {2, 2});
  const auto mask = t({1, 1, 1, 0}, {2, 2});
  // (1−0)² + (2−2)² + (3−1)² over 3 real steps; the padded (4 − 0)² does not count.
  CHECK(v(critic_loss(q, y, mask)) == Approx(5.0 / 3.0));
  CHECK(v(masked_mean(q, mask)) == Approx(2.0));
  // An all-padding batch divides by 1, not 0.
  CHECK(v(critic_loss(q, y, torch::zeros({2, 2}))) == 0.0);
}

TEST_CASE("off-policy losses: one-step target bootstraps only without termination", "[agents][off_policy_losses]") {
  const auto y = td_target(t({1, 1}, {1, 2}), t({0, 1}, {1, 2}), 0.9, t({2, 2}, {1, 2}));
  CHECK(v(y[0][0]) == Approx(1 + 0.9 * 2));
  CHECK(v(y[0][1]) == Approx(1.0));
}

TEST_CASE("off-policy losses: SAC-Discrete value, actor loss, entropy", "[agents][off_policy_losses]") {
  const auto pi = categorical_policy(t({0.0f, std::log(3.0f)}, {1, 1, 2}));
  CHECK(v(pi.probs[0][0][0]) == Approx(0.25));
  CHECK(v(pi.probs[0][0][1]) == Approx(0.75));
  const auto q1 = t({1, 2}, {1, 1, 2});
  const auto q2 = t({2, 1}, {1, 1, 2});
  const double entropy = -(0.25 * std::log(0.25) + 0.75 * std::log(0.75));
  // min(Q1, Q2) = [1, 1]: V = Σ π (1 − α log π) = 1 + α H.
  CHECK(v(sacd_soft_value(pi, q1, q2, 0.5)[0][0]) == Approx(1 + 0.5 * entropy));
  // Actor loss Σ π (α log π − min Q) = −α H − 1.
  CHECK(v(sacd_actor_loss(pi, q1, q2, 0.5, torch::ones({1, 1}))) == Approx(-0.5 * entropy - 1));
  CHECK(v(sacd_neg_entropy(pi)[0][0]) == Approx(-entropy));
  // π is clamped at 1e-8 before the log (pomdp-baselines), so a vanishing probability gives log 1e-8, not −inf.
  const auto sharp = categorical_policy(t({0.0f, -100.0f}, {1, 1, 2}));
  CHECK(v(sharp.log_probs[0][0][1]) == Approx(std::log(1e-8)));
}

TEST_CASE("off-policy losses: squashed Gaussian log-prob matches a numerical density", "[agents][off_policy_losses]") {
  const double mu = 0.3, sigma = 0.5;
  for (double noise : {-1.7, -0.2, 0.4, 1.3}) {
    const auto out = t({static_cast<float>(mu), static_cast<float>(std::log(sigma))}, {1, 1, 2}).to(torch::kFloat64);
    const auto s = squashed_gaussian_sample(out, torch::full({1, 1, 1}, noise, torch::kFloat64));
    const double a = v(s.action[0][0][0]);
    CHECK(a == Approx(std::tanh(mu + sigma * noise)));
    // P(tanh z <= x) = Φ((atanh x − μ)/σ); its central difference is the density of a.
    const auto cdf = [&](double x) { return 0.5 * std::erfc(-(std::atanh(x) - mu) / (sigma * std::sqrt(2.0))); };
    const double h = 1e-6;
    const double density = (cdf(a + h) - cdf(a - h)) / (2 * h);
    CHECK(v(s.log_prob[0][0]) == Approx(std::log(density)).margin(2e-4));
  }
  // Several dimensions: the log-probs add up.
  const auto out2 = t({0.1f, -0.4f, std::log(0.3f), std::log(0.8f)}, {1, 1, 4});
  const auto noise2 = t({0.5f, -1.0f}, {1, 1, 2});
  const auto joint = squashed_gaussian_sample(out2, noise2);
  const auto first = squashed_gaussian_sample(t({0.1f, std::log(0.3f)}, {1, 1, 2}), t({0.5f}, {1, 1, 1}));
  const auto second = squashed_gaussian_sample(t({-0.4f, std::log(0.8f)}, {1, 1, 2}), t({-1.0f}, {1, 1, 1}));
  CHECK(v(joint.log_prob[0][0]) == Approx(v(first.log_prob[0][0]) + v(second.log_prob[0][0])).epsilon(1e-5));
}

TEST_CASE("off-policy losses: SAC actor, temperature and TD3 smoothing", "[agents][off_policy_losses]") {
  const auto log_prob = t({-1.0f, 0.5f}, {1, 2});
  const auto q1 = t({2, 3}, {1, 2, 1});
  const auto q2 = t({1, 4}, {1, 2, 1});
  // (0.2·(−1) − 1) and (0.2·0.5 − 3), second step padded.
  CHECK(v(sac_actor_loss(log_prob, q1, q2, 0.2, t({1, 0}, {1, 2}))) == Approx(-1.2));
  CHECK(v(sac_actor_loss(log_prob, q1, q2, 0.2, t({1, 1}, {1, 2}))) == Approx((-1.2 + -2.9) / 2));
  // −α (mean log π + target) with α = 2.
  CHECK(v(alpha_loss(torch::full({1}, std::log(2.0)), torch::tensor(-1.0), -0.5)) == Approx(3.0));
  const auto smoothed = td3_smoothed_action(t({0.9f, 0.9f, 0.0f}, {3}), t({1.0f, 5.0f, -1.0f}, {3}), 0.2, 0.5);
  CHECK(v(smoothed[0]) == Approx(1.0));  // 0.9 + 0.2, clipped to the action bound
  CHECK(v(smoothed[1]) == Approx(1.0));  // noise clipped to 0.5 first
  CHECK(v(smoothed[2]) == Approx(-0.2));
}

TEST_CASE("off-policy networks: Polyak averaging and target copies", "[agents][off_policy_losses]") {
  torch::nn::Linear source(2, 2), target(2, 2);
  copy_module_state(*target, *source);
  CHECK(torch::equal(target->weight, source->weight));
  torch::NoGradGuard no_grad;
  source->weight.fill_(1.0);
  source->bias.fill_(1.0);
  target->weight.fill_(0.0);
  target->bias.fill_(-1.0);
  soft_update(*target, *source, 0.1);
  CHECK(v(target->weight[0][0]) == Approx(0.1));
  CHECK(v(target->bias[0]) == Approx(-0.8));
}

TEST_CASE("off-policy networks: rlkit init uses out-features for the hidden bound", "[agents][off_policy_losses]") {
  torch::manual_seed(3);
  auto mlp = make_mlp(1000, {4}, 2, 3e-3, /*rlkit_init=*/true);
  const auto& hidden = mlp[0]->as<torch::nn::Linear>()->weight;
  const auto& hidden_bias = mlp[0]->as<torch::nn::Linear>()->bias;
  const auto& last = mlp[2]->as<torch::nn::Linear>()->weight;
  // U(±1/√4) = U(±0.5), though the fan-in is 1000 (rlkit's fanin_init reads size[0]).
  CHECK(v(hidden.abs().max()) <= 0.5);
  CHECK(v(hidden.abs().max()) > 0.45);
  CHECK(v(hidden_bias.min()) == Approx(0.1));
  CHECK(v(last.abs().max()) <= 3e-3);
}
