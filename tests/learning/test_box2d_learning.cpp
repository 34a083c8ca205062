// Learning tests on the Box2D tasks made partially observable (pomdp-baselines' -P/-V masks), on CPU within a fixed
// step budget: the trained policy must score a mean return random actions cannot, both measured here on the same
// 100 episodes.
// (SAC + GRU on LunarLanderContinuous-P needs more CPU time than a test can afford: it is checked outside the suite,
// see docs/BENCHMARKS.md.)
#include <catch2/catch.hpp>

#include "learning/learning_util.hpp"

TEST_CASE("ppo + gru lands on LunarLander-V far above random actions", "[learning]") {
  // Random actions score about -200 (tests/box2d checks [-245, -160]); 100 episodes give a standard error of about 15.
  const auto config = rlm::learning_test::load_test_config("configs/box2d/ppo_gru_lunar_lander_v.yaml");
  const auto c = rlm::learning_test::train_then_compare_with_random(config, "lunar-lander-v", 100);
  INFO("mean returns: random " << c.random.mean_return() << ", trained (sampled) " << c.sampled.mean_return()
                               << ", trained (greedy) " << c.greedy.mean_return());
  CHECK(c.random.mean_return() < -150);
  CHECK(c.sampled.mean_return() >= c.random.mean_return() + 150);
}
