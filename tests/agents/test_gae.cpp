// GAE against a hand-computed example, terminated and truncated.
#include <catch2/catch.hpp>
#include <vector>

#include "agents/gae.hpp"

TEST_CASE("gae: hand-computed three-step example", "[agents][gae]") {
  const std::vector<float> rewards = {1.0f, 0.0f, 2.0f};
  const std::vector<float> values = {0.5f, 1.0f, 1.5f};
  const float gamma = 0.9f, lambda = 0.8f;
  std::vector<float> adv(3);

  // Terminated: V after the last step is 0.
  // delta2 = 2 - 1.5 = 0.5;            A2 = 0.5
  // delta1 = 0 + 0.9*1.5 - 1 = 0.35;   A1 = 0.35 + 0.72*0.5 = 0.71
  // delta0 = 1 + 0.9*1.0 - 0.5 = 1.4;  A0 = 1.4 + 0.72*0.71 = 1.9112
  rlm::agents::compute_gae(rewards, values, 0.0f, gamma, lambda, adv);
  CHECK(adv[2] == Approx(0.5f));
  CHECK(adv[1] == Approx(0.71f));
  CHECK(adv[0] == Approx(1.9112f));

  // Truncated with V(final obs) = 3: delta2 = 2 + 2.7 - 1.5 = 3.2; A1 = 0.35 + 0.72*3.2 = 2.654;
  // A0 = 1.4 + 0.72*2.654 = 3.31088
  rlm::agents::compute_gae(rewards, values, 3.0f, gamma, lambda, adv);
  CHECK(adv[2] == Approx(3.2f));
  CHECK(adv[1] == Approx(2.654f));
  CHECK(adv[0] == Approx(3.31088f));
}

TEST_CASE("gae: lambda = 1 gives the discounted return minus the value", "[agents][gae]") {
  const std::vector<float> rewards = {1.0f, 1.0f, 1.0f, 1.0f};
  const std::vector<float> values = {0.1f, 0.2f, 0.3f, 0.4f};
  std::vector<float> adv(4);
  rlm::agents::compute_gae(rewards, values, 0.0f, 0.99f, 1.0f, adv);
  float ret = 0.0f;
  for (int t = 3; t >= 0; --t) {
    ret = rewards[t] + 0.99f * ret;
    CHECK(adv[t] == Approx(ret - values[t]).epsilon(1e-5));
  }
}
