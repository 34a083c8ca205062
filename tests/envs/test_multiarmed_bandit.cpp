// MultiarmedBandit tests (popgym@410d5aa tests/test_multiarmed_bandit.py plus the env code): spaces and lengths per
// level, truncation at L and never termination, the best-arm 4-sigma test, the return range [-1, 1] reached exactly
// with injected draws, numpy's float32 comparison, and statistical tests of the env's own draws (they can fail).
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/multiarmed_bandit.hpp"
#include "envs/registry.hpp"
#include "state_golden.hpp"

using namespace rlm::envs;
using rlm::envs::popgym::MultiarmedBandit;

namespace {

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};
struct Level {
  std::string id;
  int n;
  int length;
};
const std::vector<Level> kLevels = {{"popgym/MultiarmedBanditEasy", 10, 200},
                                    {"popgym/MultiarmedBanditMedium", 20, 400},
                                    {"popgym/MultiarmedBanditHard", 30, 600}};

std::vector<float> state_of(const Env& env) {
  std::vector<float> s(static_cast<size_t>(env.state_space()->raw_size()));
  env.write_state(s);
  return s;
}

int best_arm(const MultiarmedBandit& env) {
  const auto& p = env.bandits();
  return static_cast<int>(std::max_element(p.begin(), p.end()) - p.begin());
}

}  // namespace

TEST_CASE("MultiarmedBandit spaces and episode length per difficulty", "[bandit]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    CHECK(env->observation_space() == Space::discrete(2));
    CHECK(env->action_space() == Space::discrete(level.n));
    CHECK(env->max_episode_steps() == level.length);
    REQUIRE(env->state_space() != nullptr);
    CHECK(*env->state_space() == Space::box(std::vector<float>(static_cast<size_t>(level.n), 0.0f),
                                            std::vector<float>(static_cast<size_t>(level.n), 1.0f)));
    // The POPGym paper pipeline's flat obs: 2 + n (previous action) + 2 (is_t0).
    CHECK(make_env(level.id, {.previous_action = true, .antialias = true, .flatten = true})
              ->observation_space()
              .raw_size() == 4 + level.n);
    const test::Episode ep = test::run_episode(*env, 3, test::random_policy(env->action_space(), 3), level.length + 10);
    CHECK(ep.length() == level.length);
    for (size_t t = 0; t < ep.rewards.size(); ++t) {
      REQUIRE(ep.terminated[t] == 0);
      REQUIRE(ep.truncated[t] == (t + 1 == ep.rewards.size()));
      REQUIRE(std::abs(ep.rewards[t]) == static_cast<float>(1.0 / level.length));
      REQUIRE((ep.rewards[t] > 0) == (ep.obs[t + 1][0] == 1));
    }
  }
}

TEST_CASE("MultiarmedBandit best arm returns 2p*-1 within 4 sigma (test_best)", "[bandit]") {
  for (const Level& level : kLevels) {
    auto env = make_env(level.id, kRaw);
    const auto& mab = dynamic_cast<const MultiarmedBandit&>(*env);
    for (uint64_t seed = 0; seed < 10; ++seed) {
      INFO(level.id << " seed " << seed);
      std::vector<float> obs(1);
      env->reset(seed, obs);
      const int arm = best_arm(mab);
      const double p = mab.bandits()[static_cast<size_t>(arm)];
      double total = 0;
      StepResult r;
      for (int t = 0; t < level.length; ++t) {
        REQUIRE_FALSE((r.terminated || r.truncated));
        r = env->step(std::vector<float>{static_cast<float>(arm)}, obs);
        total += r.reward;
      }
      CHECK(r.truncated);
      CHECK_FALSE(r.terminated);
      const double sd = 2 * std::sqrt(p * (1 - p) / level.length);
      CHECK(std::abs(total - (2 * p - 1)) < 4 * sd + 1e-9);
    }
  }
}

TEST_CASE("MultiarmedBandit return range (-1, 1): both ends reached exactly with injected draws", "[bandit]") {
  for (const Level& level : kLevels) {
    INFO(level.id);
    auto env = make_env(level.id, kRaw);
    auto& mab = dynamic_cast<MultiarmedBandit&>(*env);
    std::vector<float> obs(1);
    for (const bool lucky : {true, false}) {
      env->reset(1, obs);
      const float arm = static_cast<float>(best_arm(mab));
      double total = 0;
      for (int t = 0; t < level.length; ++t) {
        // 0 is below every p > 0; 1 - 2^-30 rounds to 1.0f, which no p < 1 exceeds.
        const double draw = lucky ? 0.0 : 1.0 - 0x1.0p-30;
        mab.inject_draws(std::span<const double>(&draw, 1));
        total += env->step(std::vector<float>{arm}, obs).reward;
        REQUIRE(obs[0] == (lucky ? 1 : 0));
      }
      CHECK(total == Approx(lucky ? 1.0 : -1.0).margin(1e-5));
    }
  }
}

TEST_CASE("MultiarmedBandit compares the draw with p in float32, as numpy >= 2 does", "[bandit]") {
  MultiarmedBandit env("popgym/MultiarmedBanditEasy", {});
  std::vector<float> obs(1);
  const float p = 0.3f;
  env.restore_golden(nlohmann::json{{"bandits", std::vector<double>(10, p)}}, obs);
  const auto pull = [&](double draw) {
    env.inject_draws(std::span<const double>(&draw, 1));
    env.step(std::vector<float>{0}, obs);
    return obs[0];
  };
  // Just below p in float64 but p after rounding to float32: no payout (a float64 comparison would pay).
  CHECK(pull(std::nextafter(static_cast<double>(p), 0.0)) == 0);
  CHECK(pull(static_cast<double>(p)) == 0);
  CHECK(pull(static_cast<double>(std::nextafter(p, 0.0f))) == 1);
  CHECK(pull(0.0) == 1);
  // An injected draw is used by one step only; a wrong count is an error.
  const std::vector<double> two = {0.1, 0.2};
  CHECK_THROWS_AS(env.inject_draws(two), rlm::EnvError);
  CHECK_THROWS_AS(env.inject_draws({}), rlm::EnvError);
}

TEST_CASE("MultiarmedBandit own draws: p uniform in (0, 1), payout frequency p (statistical)", "[bandit]") {
  MultiarmedBandit env("popgym/MultiarmedBanditEasy", {});
  std::vector<float> obs(1);
  // p values: 20000 draws of U[0,1) have mean 0.5 with sd 0.002 and quartiles 0.25/0.5/0.75 with sd 0.003.
  std::vector<float> ps;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    env.reset(seed, obs);
    for (float p : env.bandits()) {
      REQUIRE((p >= 0.0f && p < 1.0f));
      ps.push_back(p);
    }
  }
  double mean = 0;
  for (float p : ps) mean += p;
  mean /= static_cast<double>(ps.size());
  CHECK(std::abs(mean - 0.5) < 0.01);
  for (const double q : {0.25, 0.5, 0.75}) {
    const auto below = std::count_if(ps.begin(), ps.end(), [&](float p) { return p < q; });
    CHECK(std::abs(static_cast<double>(below) / static_cast<double>(ps.size()) - q) < 0.015);
  }
  // Payouts: 200 episodes x 200 pulls of arm 0; the payout count has mean sum(p) and sd sqrt(sum p(1-p)).
  double expected = 0, variance = 0, paid = 0;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    env.reset(10'000 + seed, obs);
    const double p = env.bandits()[0];
    for (int t = 0; t < 200; ++t) {
      env.step(std::vector<float>{0}, obs);
      paid += obs[0];
    }
    expected += 200 * p;
    variance += 200 * p * (1 - p);
  }
  CHECK(std::abs(paid - expected) < 5 * std::sqrt(variance));
}

TEST_CASE("MultiarmedBandit random policy averages about 0", "[bandit]") {
  auto env = make_env("popgym/MultiarmedBanditEasy", kRaw);
  const auto policy = test::random_policy(env->action_space(), 77);
  constexpr int kEpisodes = 1000;
  double total = 0;
  for (int i = 0; i < kEpisodes; ++i)
    total += test::run_episode(*env, static_cast<uint64_t>(i), policy, 300).episode_return();
  // E[2p-1] = 0 over the arms; one episode's return has sd about sqrt(1/3/10 + 1/200) ~ 0.19, the mean ~0.006.
  CHECK(std::abs(total / kEpisodes) < 0.03);
}

TEST_CASE("MultiarmedBandit get_state is p, replay from the same seed is identical", "[bandit]") {
  auto env = make_env("popgym/MultiarmedBanditMedium", kRaw);
  const auto& mab = dynamic_cast<const MultiarmedBandit&>(*env);
  std::vector<float> obs(1);
  env->reset(42, obs);
  const auto state = state_of(*env);
  CHECK(state == mab.bandits());
  CHECK(env->state_space()->contains(state));
  const test::Episode a = test::run_episode(*env, 42, test::random_policy(env->action_space(), 1), 1000);
  CHECK(state_of(*env) == state);  // p is fixed within an episode
  const test::Episode b = test::run_episode(*env, 42, test::random_policy(env->action_space(), 1), 1000);
  CHECK(a.obs == b.obs);
  CHECK(a.rewards == b.rewards);
}

TEST_CASE("MultiarmedBandit rejects invalid actions, stepping before reset and bad configs", "[bandit]") {
  auto env = make_env("popgym/MultiarmedBanditEasy", kRaw);
  std::vector<float> obs(1);
  CHECK_THROWS_WITH(env->step(std::vector<float>{0}, obs), Catch::Contains("before the first reset"));
  env->reset(0, obs);
  CHECK_THROWS_WITH(env->step(std::vector<float>{10}, obs),
                    "popgym-MultiarmedBanditEasy-v0: invalid action 10 for action space Discrete(10)");
  CHECK_THROWS_AS(env->step(std::vector<float>{0, 1}, obs), rlm::EnvError);
  CHECK(dynamic_cast<const MultiarmedBandit&>(*env).steps() == 0);
  CHECK_THROWS_AS(MultiarmedBandit("x/Bad", {.num_bandits = 0}), rlm::EnvError);
  CHECK_THROWS_AS(MultiarmedBandit("x/Bad", {.episode_length = 0}), rlm::EnvError);
}

TEST_CASE("MultiarmedBandit state in its space at every step and replayed from the seed (test_spaces, test_np_random)",
          "[bandit]") {
  for (const char* id :
       {"popgym/MultiarmedBanditEasy", "popgym/MultiarmedBanditMedium", "popgym/MultiarmedBanditHard"}) {
    INFO(id);
    auto env = make_env(id, kRaw);
    for (uint64_t seed : {0ull, 1ull, 2ull}) CHECK(test::check_states_random_episode(*env, seed) > 0);
  }
}
