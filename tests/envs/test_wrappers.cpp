// Wrappers: obs layouts of PreviousAction, Antialias and Flatten (popgym Flatten, one-hot: RepeatFirst flat dim
// 10 = 4 + 4 + 2, cartpoles 6 = 2 + 2 + 2), null actions at reset, and errors that still name the wrapped env.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "envs/registry.hpp"
#include "envs/wrappers.hpp"

using namespace rlm::envs;

namespace {

/// A minimal env with a Tuple obs and a Box action, to exercise the wrapper rules that the popgym envs above
/// do not reach (tuple append, Box null action clamped into the bounds).
class FakeEnv final : public Env {
 public:
  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return obs_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return 3; }
  explicit FakeEnv(float reset_value = 1) : reset_value_(reset_value) {}
  void reset(uint64_t, std::span<float> obs) override {
    obs[0] = reset_value_;
    obs[1] = 0.5f;
  }
  StepResult step(std::span<const float> action, std::span<float> obs) override {
    if (!action_space_.contains(action)) throw_invalid_action(id_, action, action_space_);
    obs[0] = 0;
    obs[1] = action[0];
    return {.reward = 1, .terminated = false, .truncated = false};
  }

 private:
  float reset_value_;
  std::string id_ = "fake/Fake";
  Space obs_space_ = Space::tuple({Space::discrete(3), Space::box({-1}, {1})});
  Space action_space_ = Space::box({0.25f, -1}, {1, 1});
};

}  // namespace

TEST_CASE("paper wrappers on RepeatFirst give a 10-float obs: suit, previous action, is_t0", "[wrappers]") {
  const WrapperOptions paper{.previous_action = true, .antialias = true, .flatten = true};
  auto env = make_env("popgym/RepeatFirstEasy", paper);
  CHECK(env->observation_space().kind == Space::Kind::Box);
  CHECK(env->observation_space().raw_size() == 10);
  CHECK(env->observation_space().low == std::vector<float>(10, 0.0f));
  CHECK(env->observation_space().high == std::vector<float>(10, 1.0f));
  CHECK(env->action_space() == Space::discrete(4));
  CHECK(env->max_episode_steps() == 51);
  CHECK(env->id() == "popgym/RepeatFirstEasy");

  std::vector<float> obs(10);
  env->reset(3, obs);
  auto suit_of = [&] {
    int hot = -1;
    for (int i = 0; i < 4; ++i)
      if (obs[static_cast<size_t>(i)] == 1.0f) hot = i;
    return hot;
  };
  const int first = suit_of();
  REQUIRE(first >= 0);
  // null action 0 one-hot, then is_t0 = 1 one-hot as [0, 1].
  CHECK(std::vector<float>(obs.begin() + 4, obs.end()) == std::vector<float>{1, 0, 0, 0, 0, 1});
  env->step(std::vector<float>{2}, obs);
  CHECK(suit_of() >= 0);
  CHECK(std::vector<float>(obs.begin() + 4, obs.end()) == std::vector<float>{0, 0, 1, 0, 1, 0});
  float sum = 0;
  for (float v : obs) sum += v;
  CHECK(sum == 3.0f);
}

TEST_CASE("wrapper spaces nest as in popgym", "[wrappers]") {
  auto prev = make_env("popgym/RepeatPreviousEasy", {.previous_action = true, .antialias = false, .flatten = false});
  CHECK(prev->observation_space() == Space::tuple({Space::discrete(4), Space::discrete(4)}));
  auto both = make_env("popgym/RepeatPreviousEasy", {.previous_action = true, .antialias = true, .flatten = false});
  CHECK(both->observation_space().to_string() == "Tuple(Discrete(4), Discrete(4), Discrete(2))");
  auto alias = make_env("popgym/RepeatPreviousEasy", {.previous_action = false, .antialias = true, .flatten = false});
  CHECK(alias->observation_space().to_string() == "Tuple(Discrete(4), Discrete(2))");
  auto flat = make_env("popgym/RepeatPreviousEasy", {});
  CHECK(flat->observation_space().to_string() == "Box(4)");

  // Raw layout of prev_action+antialias: [suit, previous action, is_t0].
  std::vector<float> obs(3);
  both->reset(1, obs);
  CHECK(obs[1] == 0.0f);
  CHECK(obs[2] == 1.0f);
  both->step(std::vector<float>{3}, obs);
  CHECK(obs[1] == 3.0f);
  CHECK(obs[2] == 0.0f);
}

TEST_CASE("paper wrappers on PositionOnlyCartPole give 6 floats with the Box part copied", "[wrappers]") {
  auto raw =
      make_env("popgym/PositionOnlyCartPoleHard", {.previous_action = false, .antialias = false, .flatten = false});
  auto env = make_env("popgym/PositionOnlyCartPoleHard", {.previous_action = true, .antialias = true, .flatten = true});
  REQUIRE(env->observation_space().raw_size() == 6);
  CHECK(env->observation_space().high == std::vector<float>{4.8f, 0.41887903f, 1, 1, 1, 1});
  std::vector<float> r(2), w(6);
  raw->reset(9, r);
  env->reset(9, w);
  CHECK(std::vector<float>(w.begin(), w.begin() + 2) == r);
  CHECK(std::vector<float>(w.begin() + 2, w.end()) == std::vector<float>{1, 0, 0, 1});
  raw->step(std::vector<float>{1}, r);
  env->step(std::vector<float>{1}, w);
  CHECK(std::vector<float>(w.begin(), w.begin() + 2) == r);
  CHECK(std::vector<float>(w.begin() + 2, w.end()) == std::vector<float>{0, 1, 1, 0});
}

TEST_CASE("PreviousAction appends to a Tuple obs and clamps the Box null action into its bounds", "[wrappers]") {
  PreviousAction env(std::make_unique<FakeEnv>());
  CHECK(env.observation_space().to_string() == "Tuple(Discrete(3), Box(1), Box(2))");
  std::vector<float> obs(4);
  env.reset(0, obs);
  CHECK(obs == std::vector<float>{1, 0.5f, 0.25f, 0});  // 0 is below low = 0.25 in the first component
  env.step(std::vector<float>{0.5f, -0.75f}, obs);
  CHECK(obs == std::vector<float>{0, 0.5f, 0.5f, -0.75f});

  Flatten flat(std::make_unique<Antialias>(std::make_unique<PreviousAction>(std::make_unique<FakeEnv>())));
  CHECK(flat.observation_space().raw_size() == 3 + 1 + 2 + 2);
  std::vector<float> f(8);
  flat.reset(0, f);
  CHECK(f == std::vector<float>{0, 1, 0, 0.5f, 0.25f, 0, 0, 1});
}

TEST_CASE("Flatten reports an obs outside the wrapped env's space instead of writing out of bounds", "[wrappers]") {
  for (float bad : {3.0f, -1.0f, 0.5f}) {
    Flatten flat(std::make_unique<FakeEnv>(bad));
    std::vector<float> f(4);
    CHECK_THROWS_WITH(flat.reset(0, f),
                      Catch::StartsWith("fake-Fake-v0: obs ") && Catch::Contains("Tuple(Discrete(3), Box(1))"));
  }
}

TEST_CASE("invalid actions through wrappers still name the wrapped env", "[wrappers]") {
  auto env = make_env("popgym/RepeatFirstMedium", {.previous_action = true, .antialias = true, .flatten = true});
  std::vector<float> obs(10);
  env->reset(0, obs);
  const std::vector<float> before = obs;
  CHECK_THROWS_WITH(env->step(std::vector<float>{9}, obs),
                    "popgym-RepeatFirstMedium-v0: invalid action 9 for action space Discrete(4)");
  CHECK(obs == before);  // the failed step wrote nothing
  CHECK_THROWS_AS(PreviousAction(nullptr), rlm::EnvError);
}
