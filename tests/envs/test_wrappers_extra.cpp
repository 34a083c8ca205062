// DiscreteAction and Markovian (popgym@410d5aa wrappers and tests/test_wrappers.py): action decoding as numpy's
// unravel_index, the obs layouts of every Markovian level, make_env's wrapper order, clear errors, and a replay of
// popgym's Markovian(Antialias(PreviousAction(env)), FULL_AND_PARTIAL) recordings (scripts/record_popgym_wrapped.py).
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "env_test_util.hpp"
#include "envs/popgym/labyrinth_escape.hpp"
#include "envs/popgym/labyrinth_explore.hpp"
#include "envs/registry.hpp"
#include "envs/wrappers.hpp"
#include "golden.hpp"

using namespace rlm::envs;

namespace {

/// A board game in miniature: a MultiDiscrete([3, 4]) action (row, col), echoed as the obs; the state is
/// (steps taken, a Box value) so that the state has a nested layout. Terminates after 4 steps.
class BoardEnv final : public Env {
 public:
  explicit BoardEnv(bool has_state = true) : has_state_(has_state) {}
  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return obs_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return 4; }
  void reset(uint64_t, std::span<float> obs) override {
    steps_ = 0;
    obs[0] = obs[1] = 0;
  }
  StepResult step(std::span<const float> action, std::span<float> obs) override {
    if (!action_space_.contains(action)) throw_invalid_action(id_, action, action_space_);
    ++steps_;
    last_ = {action[0], action[1]};
    obs[0] = action[0];
    obs[1] = action[1];
    return {.reward = action[0] * 10 + action[1], .terminated = steps_ == 4, .truncated = false};
  }
  const Space* state_space() const override { return has_state_ ? &state_space_ : nullptr; }
  void write_state(std::span<float> state) const override {
    state[0] = static_cast<float>(steps_);
    state[1] = 0.5f * static_cast<float>(steps_);
  }
  std::array<float, 2> last() const { return last_; }

 private:
  bool has_state_;
  std::string id_ = "fake/Board";
  Space obs_space_ = Space::multi_discrete({3, 4});
  Space action_space_ = Space::multi_discrete({3, 4});
  Space state_space_ = Space::tuple({Space::discrete(5), Space::box({0}, {10})});
  int steps_ = 0;
  std::array<float, 2> last_{-1, -1};
};

/// Any env with a given action space (Box, Tuple, huge MultiDiscrete), for the DiscreteAction errors.
class ActionSpaceEnv final : public Env {
 public:
  explicit ActionSpaceEnv(Space action) : action_(std::move(action)) {}
  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return obs_; }
  const Space& action_space() const override { return action_; }
  int64_t max_episode_steps() const override { return 1; }
  void reset(uint64_t, std::span<float> obs) override { obs[0] = 0; }
  StepResult step(std::span<const float>, std::span<float> obs) override {
    obs[0] = 1;
    return {.reward = 0, .terminated = true, .truncated = false};
  }

 private:
  std::string id_ = "fake/Actions";
  Space obs_ = Space::discrete(2);
  Space action_;
};

/// Starts every episode from a recorded popgym state instead of a seed, so that popgym's wrapped recordings can be
/// replayed through our wrappers.
template <class E>
class GoldenReset final : public Env {
 public:
  GoldenReset(std::unique_ptr<E> env, nlohmann::json state) : env_(std::move(env)), state_(std::move(state)) {}
  const std::string& id() const override { return env_->id(); }
  const Space& observation_space() const override { return env_->observation_space(); }
  const Space& action_space() const override { return env_->action_space(); }
  int64_t max_episode_steps() const override { return env_->max_episode_steps(); }
  void reset(uint64_t, std::span<float> obs) override { env_->restore_golden(state_, obs); }
  StepResult step(std::span<const float> action, std::span<float> obs) override { return env_->step(action, obs); }
  const Space* state_space() const override { return env_->state_space(); }
  void write_state(std::span<float> state) const override { env_->write_state(state); }

 private:
  std::unique_ptr<E> env_;
  nlohmann::json state_;
};

std::vector<float> step_discrete(Env& env, float a, std::vector<float>& obs) {
  env.step(std::vector<float>{a}, obs);
  return obs;
}

}  // namespace

TEST_CASE("DiscreteAction decodes row-major as numpy's unravel_index", "[wrappers]") {
  auto inner = std::make_unique<BoardEnv>();
  const BoardEnv* board = inner.get();
  DiscreteAction env(std::move(inner));
  CHECK(env.action_space() == Space::discrete(12));
  CHECK(env.observation_space() == Space::multi_discrete({3, 4}));
  std::vector<float> obs(2);
  env.reset(0, obs);
  // np.unravel_index(a, (3, 4)): 7 -> (1, 3), 11 -> (2, 3), 4 -> (1, 0), 0 -> (0, 0).
  const std::vector<std::pair<float, std::array<float, 2>>> cases = {
      {7, {1, 3}}, {11, {2, 3}}, {4, {1, 0}}, {0, {0, 0}}};
  for (const auto& [a, want] : cases) {
    if (a == 0) env.reset(0, obs);
    const StepResult r = env.step(std::vector<float>{a}, obs);
    CHECK(board->last() == want);
    CHECK(obs == std::vector<float>{want[0], want[1]});
    CHECK(r.reward == want[0] * 10 + want[1]);
  }
  CHECK_THROWS_WITH(env.step(std::vector<float>{12}, obs),
                    "fake-Board-v0: invalid action 12 for action space Discrete(12)");
  CHECK_THROWS_AS(env.step(std::vector<float>{1, 2}, obs), rlm::EnvError);  // the old MultiDiscrete form
  CHECK_THROWS_AS(env.step(std::vector<float>{2.5f}, obs), rlm::EnvError);

  // Three components: np.unravel_index(17, (2, 3, 4)) = (1, 1, 1), 23 -> (1, 2, 3), 5 -> (0, 1, 1).
  class Three final : public Env {
   public:
    const std::string& id() const override { return id_; }
    const Space& observation_space() const override { return space_; }
    const Space& action_space() const override { return space_; }
    int64_t max_episode_steps() const override { return 10; }
    void reset(uint64_t, std::span<float> obs) override { std::fill(obs.begin(), obs.end(), 0.0f); }
    StepResult step(std::span<const float> action, std::span<float> obs) override {
      std::copy(action.begin(), action.end(), obs.begin());
      return {};
    }

   private:
    std::string id_ = "fake/Three";
    Space space_ = Space::multi_discrete({2, 3, 4});
  };
  DiscreteAction three(std::make_unique<Three>());
  CHECK(three.action_space() == Space::discrete(24));
  std::vector<float> o(3);
  three.reset(0, o);
  CHECK(step_discrete(three, 17, o) == std::vector<float>{1, 1, 1});
  CHECK(step_discrete(three, 23, o) == std::vector<float>{1, 2, 3});
  CHECK(step_discrete(three, 5, o) == std::vector<float>{0, 1, 1});
}

TEST_CASE("memory-monoids pipeline on a MultiDiscrete-action env: the previous action is the decoded one",
          "[wrappers]") {
  // DiscreteAction(Flatten(Antialias(PreviousAction(env)))): obs one-hot 3 + 4, previous action 3 + 4, is_t0 2.
  DiscreteAction env(std::make_unique<Flatten>(
      std::make_unique<Antialias>(std::make_unique<PreviousAction>(std::make_unique<BoardEnv>()))));
  CHECK(env.action_space() == Space::discrete(12));
  REQUIRE(env.observation_space().raw_size() == 16);
  std::vector<float> obs(16);
  env.reset(0, obs);
  CHECK(obs == std::vector<float>{1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1});
  env.step(std::vector<float>{7}, obs);  // (1, 3)
  CHECK(obs == std::vector<float>{0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0});
  env.step(std::vector<float>{8}, obs);  // (2, 0)
  CHECK(obs == std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0});
}

TEST_CASE("DiscreteAction leaves Discrete actions alone and rejects the others clearly", "[wrappers]") {
  auto env = make_env("popgym/LabyrinthEscapeEasy", {.flatten = false, .discrete_action = true});
  CHECK(env->action_space() == Space::discrete(4));
  CHECK(dynamic_cast<const DiscreteAction*>(env.get()) != nullptr);
  std::vector<float> obs(10);
  env->reset(0, obs);
  env->step(std::vector<float>{2}, obs);
  CHECK(obs[9] == 2.0f);

  CHECK_THROWS_WITH(DiscreteAction(std::make_unique<ActionSpaceEnv>(Space::box({-2}, {2}))),
                    "fake-Actions-v0: env.discrete_action needs a Discrete or MultiDiscrete action space, got Box(1)");
  CHECK_THROWS_WITH(
      DiscreteAction(std::make_unique<ActionSpaceEnv>(Space::tuple({Space::discrete(2), Space::discrete(3)}))),
      Catch::Contains("needs a Discrete or MultiDiscrete action space"));
  CHECK_THROWS_WITH(DiscreteAction(std::make_unique<ActionSpaceEnv>(Space::multi_discrete({4096, 4097}))),
                    Catch::Contains("more than 2^24"));
  CHECK_NOTHROW(DiscreteAction(std::make_unique<ActionSpaceEnv>(Space::multi_discrete({4096, 4096}))));
}

TEST_CASE("Markovian levels: partial keeps the obs, full is the state, full_and_partial is (obs, state)",
          "[wrappers]") {
  CHECK(parse_observability("partial") == Observability::kPartial);
  CHECK(parse_observability("full") == Observability::kFull);
  CHECK(parse_observability("full_and_partial") == Observability::kFullAndPartial);
  CHECK_THROWS_WITH(parse_observability("full_in_info_dict"),
                    "unknown Markovian level 'full_in_info_dict' (expected partial, full or full_and_partial)");

  Markovian partial(std::make_unique<BoardEnv>(), Observability::kPartial);
  CHECK(partial.observation_space() == Space::multi_discrete({3, 4}));

  Markovian full(std::make_unique<BoardEnv>(), Observability::kFull);
  CHECK(full.observation_space().to_string() == "Tuple(Discrete(5), Box(1))");
  std::vector<float> s(2);
  full.reset(0, s);
  CHECK(s == std::vector<float>{0, 0});
  full.step(std::vector<float>{2, 1}, s);
  CHECK(s == std::vector<float>{1, 0.5f});
  REQUIRE(full.state_space() != nullptr);  // wrappers forward the state
  CHECK(*full.state_space() == full.observation_space());

  Markovian both(std::make_unique<BoardEnv>(), Observability::kFullAndPartial);
  CHECK(both.observation_space().to_string() == "Tuple(MultiDiscrete([3, 4]), Tuple(Discrete(5), Box(1)))");
  std::vector<float> o(4);
  both.reset(0, o);
  CHECK(o == std::vector<float>{0, 0, 0, 0});
  both.step(std::vector<float>{2, 3}, o);
  CHECK(o == std::vector<float>{2, 3, 1, 0.5f});
  both.step(std::vector<float>{0, 1}, o);
  CHECK(o == std::vector<float>{0, 1, 2, 1});
  for (Env* e : std::initializer_list<Env*>{&partial, &full, &both}) CHECK(e->id() == "fake/Board");

  // Flattened: one-hot for the discrete parts, the Box state component copied.
  Flatten flat(std::make_unique<Markovian>(std::make_unique<BoardEnv>(), Observability::kFullAndPartial));
  CHECK(flat.observation_space().raw_size() == 3 + 4 + 5 + 1);
  std::vector<float> f(13);
  flat.reset(0, f);
  flat.step(std::vector<float>{2, 3}, f);
  CHECK(f == std::vector<float>{0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0.5f});
}

TEST_CASE("Markovian on an env without a state is a clear error", "[wrappers]") {
  CHECK_THROWS_WITH(Markovian(std::make_unique<BoardEnv>(false), Observability::kFull),
                    "fake-Board-v0: env.markovian = full needs the env's state, but the env exposes no state "
                    "(state_space())");
  CHECK_THROWS_WITH(Markovian(std::make_unique<BoardEnv>(false), Observability::kFullAndPartial),
                    Catch::Contains("env.markovian = full_and_partial needs the env's state"));
  CHECK_NOTHROW(Markovian(std::make_unique<BoardEnv>(false), Observability::kPartial));
  CHECK_THROWS_WITH(make_env("popgym/LabyrinthEscapeEasy", {.markovian = "fully"}),
                    Catch::Contains("unknown Markovian level 'fully'"));
}

TEST_CASE("make_env wraps in the order previous_action, antialias, markovian, flatten, discrete_action", "[wrappers]") {
  auto env = make_env("popgym/LabyrinthExploreEasy", {.previous_action = true,
                                                      .antialias = true,
                                                      .flatten = true,
                                                      .markovian = "full_and_partial",
                                                      .discrete_action = true});
  const auto* d = dynamic_cast<const DiscreteAction*>(env.get());
  REQUIRE(d != nullptr);
  const auto* f = dynamic_cast<const Flatten*>(&d->inner());
  REQUIRE(f != nullptr);
  const auto* m = dynamic_cast<const Markovian*>(&f->inner());
  REQUIRE(m != nullptr);
  CHECK(m->level() == Observability::kFullAndPartial);
  const auto* a = dynamic_cast<const Antialias*>(&m->inner());
  REQUIRE(a != nullptr);
  const auto* p = dynamic_cast<const PreviousAction*>(&a->inner());
  REQUIRE(p != nullptr);
  CHECK(dynamic_cast<const popgym::LabyrinthExplore*>(&p->inner()) != nullptr);
  // (view 9 x 5 + last action 5) + previous action 4 + is_t0 2 + state 121 x 5.
  CHECK(env->observation_space().raw_size() == 50 + 4 + 2 + 605);
  CHECK(env->action_space() == Space::discrete(4));
  CHECK(env->state_space() != nullptr);
  CHECK(env->id() == "popgym/LabyrinthExploreEasy");

  // The raw pipeline agrees: obs (10) + previous action + is_t0, then the state, which equals the env's own.
  auto raw = make_env("popgym/LabyrinthExploreEasy",
                      {.previous_action = true, .antialias = true, .flatten = false, .markovian = "full_and_partial"});
  CHECK(raw->observation_space().to_string().starts_with(
      "Tuple(Tuple(MultiDiscrete([5, 5, 5, 5, 5, 5, 5, 5, 5, 5]), Discrete(4), Discrete(2)), MultiDiscrete(["));
  std::vector<float> obs(static_cast<size_t>(raw->observation_space().raw_size()));
  std::vector<float> state(121);
  raw->reset(5, obs);
  raw->write_state(state);
  CHECK(std::vector<float>(obs.begin() + 12, obs.end()) == state);
  CHECK(obs[10] == 0.0f);
  CHECK(obs[11] == 1.0f);
  raw->step(std::vector<float>{1}, obs);
  raw->write_state(state);
  CHECK(std::vector<float>(obs.begin() + 12, obs.end()) == state);
  CHECK(obs[10] == 1.0f);
  CHECK(obs[11] == 0.0f);

  // Every wrapper configuration conforms: random episodes stay in the spaces and replay bit-identically.
  for (const char* level : {"partial", "full", "full_and_partial"})
    for (bool flatten : {false, true}) {
      INFO(level << " flatten " << flatten);
      auto e = make_env("popgym/LabyrinthEscapeEasy", {.previous_action = true,
                                                       .antialias = true,
                                                       .flatten = flatten,
                                                       .markovian = level,
                                                       .discrete_action = true});
      const test::Episode ep = test::run_episode(*e, 3, test::random_policy(e->action_space(), 4), 2000);
      for (const auto& o : ep.obs) REQUIRE(e->observation_space().contains(o));
      const test::Episode again = test::run_episode(*e, 3, test::random_policy(e->action_space(), 4), 2000);
      CHECK(again.obs == ep.obs);
    }
}

namespace {

/// Replays tests/data/popgym/wrapped/<name>.json (popgym's Markovian(Antialias(PreviousAction(env)),
/// FULL_AND_PARTIAL)) through our wrappers at the levels full_and_partial (raw and flattened) and full.
template <class E>
void check_wrapped_golden(const std::string& name) {
  const auto data = test::load_golden("wrapped/" + name);
  const std::string id = data.at("canonical_id");
  int episodes = 0;
  for (const auto& ep : data.at("episodes")) {
    INFO(name << " seed " << ep.at("seed").get<int>() << " policy " << ep.at("policy").get<std::string>());
    auto make_chain = [&](Observability level, bool flatten) -> std::unique_ptr<Env> {
      auto e = make_env(id, {.previous_action = false, .antialias = false, .flatten = false});
      auto typed = std::unique_ptr<E>(dynamic_cast<E*>(e.release()));
      REQUIRE(typed != nullptr);
      std::unique_ptr<Env> env = std::make_unique<GoldenReset<E>>(std::move(typed), ep.at("initial_state"));
      env = std::make_unique<Markovian>(std::make_unique<Antialias>(std::make_unique<PreviousAction>(std::move(env))),
                                        level);
      if (flatten) env = std::make_unique<Flatten>(std::move(env));
      return std::make_unique<DiscreteAction>(std::move(env));  // a Discrete action: passed through unchanged
    };
    auto both = make_chain(Observability::kFullAndPartial, false);
    auto flat = make_chain(Observability::kFullAndPartial, true);
    auto full = make_chain(Observability::kFull, false);
    std::vector<float> o(static_cast<size_t>(both->observation_space().raw_size()));
    std::vector<float> f(static_cast<size_t>(flat->observation_space().raw_size()));
    std::vector<float> s(static_cast<size_t>(full->observation_space().raw_size()));
    auto check = [&](size_t t) {
      INFO("obs at step " << t);
      const auto want = ep.at("obs")[t].get<std::vector<float>>();
      REQUIRE(o == want);
      REQUIRE(f == ep.at("flat_obs")[t].get<std::vector<float>>());
      REQUIRE(s == std::vector<float>(want.end() - static_cast<ptrdiff_t>(s.size()), want.end()));
    };
    both->reset(0, o);
    flat->reset(0, f);
    full->reset(0, s);
    check(0);
    const auto& actions = ep.at("actions");
    for (size_t t = 0; t < actions.size(); ++t) {
      const auto action = actions[t].get<std::vector<float>>();
      const StepResult r = both->step(action, o);
      flat->step(action, f);
      full->step(action, s);
      CHECK(r.reward == Approx(ep.at("rewards")[t].get<double>()).margin(1e-6));
      REQUIRE(r.terminated == ep.at("terminated")[t].get<bool>());
      REQUIRE(r.truncated == ep.at("truncated")[t].get<bool>());
      check(t + 1);
    }
    ++episodes;
  }
  CHECK(episodes >= 3);
}

}  // namespace

TEST_CASE("golden: popgym's Markovian(Antialias(PreviousAction)) recordings replay through our wrappers",
          "[wrappers][golden]") {
  check_wrapped_golden<popgym::LabyrinthEscape>("LabyrinthEscapeEasy");
  check_wrapped_golden<popgym::LabyrinthExplore>("LabyrinthExploreEasy");
}
