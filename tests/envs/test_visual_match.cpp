// Visual Match, passive and active (Memory-RL envs/key_to_door/visual_match.py): golden replays of the reference's
// episodes (scripts/record_memory_rl_pycolab.py), our draws against the reference's statistics, and its rules: phase
// lengths, the walled-in passive player, blocking colour cells, one choice per episode, the per-instance colour
// permutation, the return bounds [0, #apples + final] and option errors.
#include <bit>
#include <catch2/catch.hpp>
#include <set>

#include "core/error.hpp"
#include "core/seed.hpp"
#include "envs/memory_rl/visual_match.hpp"
#include "envs/rng.hpp"
#include "envs/vec_env.hpp"
#include "pycolab_test_util.hpp"

using rlm::envs::memory_rl::VisualMatch;
using namespace rlm::envs::memory_rl::pycolab;
namespace test = rlm::envs::test;

namespace {

rlm::envs::StepResult step(VisualMatch& env, int action, std::vector<float>& obs) {
  const float a = static_cast<float>(action);
  return env.step({&a, 1}, obs);
}

/// Recorded draws for restore_golden: colours (hue of b, c, e), target, cells, and the first ten apple cells.
nlohmann::json draws(std::array<int, 3> colours, const std::string& target, Cell target_cell, Cell start_cell) {
  nlohmann::json apples = nlohmann::json::array();
  for (int i = 0; i < DistractorPhase::kApples; ++i) {
    const Cell c = DistractorPhase::candidates()[static_cast<size_t>(i)];
    apples.push_back({c.row, c.col});
  }
  return {{"colours", colours},
          {"target", target},
          {"target_cell", {target_cell.row, target_cell.col}},
          {"start_cell", {start_cell.row, start_cell.col}},
          {"apple_cells", apples}};
}

/// The view cells showing pure red, green or blue (the objects' colours), as (view cell, hue).
std::vector<std::pair<int, int>> coloured_cells(const std::vector<float>& obs) {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < 25; ++i) {
    const auto rgb = test::view_rgb(obs, i / 5, i % 5);
    for (int h = 0; h < 3; ++h) {
      std::array<float, 3> pure{0, 0, 0};
      pure[static_cast<size_t>(h)] = 255;
      if (rgb == pure) out.emplace_back(i, h);
    }
  }
  return out;
}

/// Steps through the explore and distractor phases with action 1 (south); returns the reward summed on the way.
float skip_to_reward_phase(VisualMatch& env, std::vector<float>& obs) {
  float total = 0;
  while (env.timer().phase != kReward) total += step(env, 1, obs).reward;
  return total;
}

}  // namespace

TEST_CASE("visual match: replays Memory-RL's trajectories exactly", "[envs][visual_match]") {
  for (const std::string name : {"PassiveVisualMatch", "ActiveVisualMatch"})
    for (const std::string variant : {"shm", "original"})
      for (int d : {5, 25}) {
        const std::string file = name + "_" + variant + "_D" + std::to_string(d);
        const auto cover = test::check_pycolab_golden<VisualMatch>(file);
        INFO(file);
        CHECK(cover.episodes >= 3);
        CHECK(cover.successes >= 1);  // the scripted optimal policy chose the right colour
        CHECK(cover.failures >= 1);   // the scripted failing one did not
        CHECK(cover.apple_reward > 0);
      }
}

TEST_CASE("visual match: phase lengths and the phase-change obs and the episode length", "[envs][visual_match]") {
  struct Case {
    bool passive;
    std::string variant;
    int distractor_length, explore, distractor, reward;
  };
  for (const Case& c :
       {Case{true, "shm", 0, 15, 100, 10}, Case{false, "shm", 0, 15, 100, 10}, Case{true, "original", 0, 15, 60, 15},
        Case{false, "original", 7, 15, 7, 15}, Case{true, "shm", 1, 15, 1, 10}}) {
    INFO(c.variant << " passive " << c.passive << " D " << c.distractor_length);
    VisualMatch env("memory_rl/VM",
                    {.passive = c.passive, .variant = c.variant, .distractor_length = c.distractor_length});
    CHECK(env.max_episode_steps() == c.explore + c.distractor + c.reward);
    std::vector<float> obs(75);
    env.reset(3, obs);
    rlm::envs::Rng rng(11);
    for (int t = 1; t <= env.max_episode_steps(); ++t) {
      INFO("step " << t);
      const auto r = step(env, static_cast<int>(rng.uniform_int(4)), obs);
      const Phase expected = t < c.explore ? kExplore : t < c.explore + c.distractor ? kDistractor : kReward;
      CHECK(r.terminated == (t == env.max_episode_steps()));
      CHECK_FALSE(r.truncated);
      if (r.terminated) break;
      CHECK(env.timer().phase == expected);
      if (t == c.explore || t == c.explore + c.distractor) {
        // The step that ends a phase shows the next phase's first frame: its start cell (5, 5) in both, frame 0.
        CHECK(env.timer().frame == 0);
        CHECK(env.player() == Cell{5, 5});
        if (expected == kDistractor) CHECK(r.reward == 0);  // the explore phase pays nothing, nor does frame 0
        // Both starts have a wall right below: the view's row 3 is wall ((25, 25, 25)).
        for (int col = 1; col < 4; ++col) CHECK(test::view_rgb(obs, 3, col) == std::array<float, 3>{25, 25, 25});
      }
    }
  }
}

TEST_CASE("visual match: the passive player is walled in and always sees the colour", "[envs][visual_match]") {
  VisualMatch env("memory_rl/PassiveVisualMatch", {.passive = true, .distractor_length = 5});
  std::vector<float> obs(75), first(75);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    env.reset(seed, first);
    const auto& e = env.episode();
    // One colour cell, at the target's place in the 3×3 ring, with the target's hue.
    const auto coloured = coloured_cells(first);
    REQUIRE(coloured.size() == 1);
    CHECK(coloured[0].first == (e.target_cell.row - 2 + 2) * 5 + (e.target_cell.col - 5 + 2));
    CHECK(coloured[0].second == env.colours()[static_cast<size_t>(e.target)]);
    for (int t = 0; t < 15; ++t) {
      step(env, t % 4, obs);
      if (t < 14) {
        CHECK(env.player() == Cell{2, 5});
        CHECK(obs == first);  // nothing moves
      }
    }
    CHECK(env.timer().phase == kDistractor);
  }
}

TEST_CASE("visual match: in the active rooms walls and the colour cell block", "[envs][visual_match]") {
  VisualMatch env("memory_rl/ActiveVisualMatch", {.passive = false, .distractor_length = 5});
  std::vector<float> obs(75);
  env.restore_golden(draws({0, 1, 2}, "c", {3, 3}, {4, 3}), obs);
  CHECK(env.player() == Cell{4, 3});
  step(env, 0, obs);  // north into the colour cell (3, 3): blocked
  CHECK(env.player() == Cell{4, 3});
  step(env, 2, obs);  // west into the wall (4, 2): blocked
  CHECK(env.player() == Cell{4, 3});
  step(env, 3, obs);  // east
  step(env, 0, obs);  // north through the gap at (3, 4)
  step(env, 0, obs);
  step(env, 0, obs);  // (1, 4), then the top wall blocks
  step(env, 0, obs);
  CHECK(env.player() == Cell{1, 4});
  // The colour shows green (c has hue 1) at (3, 3): from (1, 4) it is view cell (4, 1).
  const auto coloured = coloured_cells(obs);
  REQUIRE(coloured.size() == 1);
  CHECK(coloured[0] == std::pair<int, int>{4 * 5 + 1, 1});
  // 26 wall candidates, 10 start cells, as the reference's art.
  CHECK(env.target_cells().size() == 26);
  CHECK(env.start_cells().size() == 10);
}

TEST_CASE("visual match: exactly one choice per episode", "[envs][visual_match]") {
  for (const std::string variant : {"shm", "original"}) {
    INFO(variant);
    VisualMatch env("memory_rl/PassiveVisualMatch", {.passive = true, .variant = variant, .distractor_length = 1});
    std::vector<float> obs(75);
    const float final_reward = variant == "shm" ? 10.0f : 5.0f;
    CHECK(env.final_reward() == final_reward);

    // Right first: b (hue 2, blue) is the target; 7 moves to (1, 2).
    env.restore_golden(draws({2, 0, 1}, "b", {1, 4}, {2, 5}), obs);
    skip_to_reward_phase(env, obs);
    CHECK(env.player() == Cell{5, 5});
    float total = 0;
    bool success = false;
    for (int a : {0, 0, 0, 2, 2, 2}) total += step(env, a, obs).reward;
    CHECK(total == 0);
    CHECK(env.objects_visible());
    total += step(env, 0, obs).reward;  // onto b
    CHECK(total == final_reward);
    CHECK_FALSE(env.objects_visible());
    CHECK(coloured_cells(obs).empty());  // all three vanished
    while (env.timer().phase == kReward && !success) {
      const auto r = step(env, 3, obs);  // east along row 1, over where c and e were
      total += r.reward;
      success = r.success;
      if (r.terminated) break;
    }
    CHECK(total == final_reward);
    CHECK(success);

    // Wrong first: c at (1, 5) is 4 moves north; then b pays nothing.
    env.restore_golden(draws({2, 0, 1}, "b", {1, 4}, {2, 5}), obs);
    skip_to_reward_phase(env, obs);
    total = 0;
    for (int a : {0, 0, 0}) total += step(env, a, obs).reward;
    CHECK(coloured_cells(obs).size() == 1);  // c, red, straight ahead
    total += step(env, 0, obs).reward;
    CHECK_FALSE(env.objects_visible());
    rlm::envs::StepResult r;
    for (int a : {2, 2, 2}) total += (r = step(env, a, obs)).reward;  // onto (1, 2): b is gone
    CHECK(env.player() == Cell{1, 2});
    while (!r.terminated) total += (r = step(env, 1, obs)).reward;
    CHECK(total == 0);
    CHECK_FALSE(r.success);
  }
}

TEST_CASE("visual match: the colour permutation is drawn once per instance", "[envs][visual_match]") {
  std::set<std::array<int, 3>> seen;
  std::vector<float> obs(75);
  for (uint64_t instance = 0; instance < 60; ++instance) {
    VisualMatch env("memory_rl/PassiveVisualMatch", {.passive = true});
    env.seed_instance(instance);
    const auto colours = env.colours();
    CHECK(std::set<int>(colours.begin(), colours.end()).size() == 3);
    seen.insert(colours);
    for (uint64_t seed = 1000; seed < 1010; ++seed) {
      env.reset(seed, obs);
      CHECK(env.colours() == colours);  // kept for the instance's life
    }
  }
  CHECK(seen.size() == 6);  // every permutation occurs across instances
  // Without an instance seed an env behaves as if given 0; the episode's draws do not depend on the instance seed.
  VisualMatch a("memory_rl/PassiveVisualMatch", {}), b("memory_rl/PassiveVisualMatch", {});
  b.seed_instance(0);
  CHECK(a.colours() == b.colours());
  b.seed_instance(5);
  a.reset(8, obs);
  b.reset(8, obs);
  CHECK(a.episode().target == b.episode().target);
  CHECK(a.episode().target_cell == b.episode().target_cell);
  CHECK(a.episode().apples == b.episode().apples);
}

TEST_CASE("visual match: VecEnv gives every instance its own permutation and rebuilds the same ones",
          "[envs][visual_match]") {
  // A resumed run rebuilds its VecEnv from the same seed: the instances must come back with the same colours, or the
  // resumed agent would face other tasks than the one it trained on.
  auto colours_of = [](uint64_t seed) {
    rlm::envs::VecEnv envs("memory_rl/PassiveVisualMatch", 24, 2, seed);
    envs.reset();
    std::vector<std::vector<float>> views;  // each first view shows the target in its instance's colour
    for (int i = 0; i < 24; ++i) {
      auto obs = envs.obs().subspan(static_cast<size_t>(i) * 75, 75);
      views.emplace_back(obs.begin(), obs.end());
    }
    return views;
  };
  CHECK(colours_of(3) == colours_of(3));
  std::set<std::array<int, 3>> seen;
  for (uint64_t i = 0; i < 24; ++i) {
    VisualMatch env("memory_rl/PassiveVisualMatch", {});
    env.seed_instance(rlm::derive_seed(3, {rlm::kEnvInstanceStream, i}));
    seen.insert(env.colours());
  }
  CHECK(seen.size() > 1);  // instances differ (24 draws of 6 permutations)
}

TEST_CASE("visual match: returns are apples plus the final reward on success", "[envs][visual_match]") {
  for (const bool passive : {true, false})
    for (const std::string variant : {"shm", "original"}) {
      INFO(variant << " passive " << passive);
      VisualMatch env("memory_rl/VM", {.passive = passive, .variant = variant, .distractor_length = 30});
      std::vector<float> obs(75);
      rlm::envs::Rng rng(5);
      int successes = 0;
      for (uint64_t seed = 0; seed < 300; ++seed) {
        env.reset(seed, obs);
        float apples = 0, reward_phase = 0;
        rlm::envs::StepResult r;
        int t = 0;
        while (!r.terminated) {
          const Phase phase = env.timer().phase;
          r = step(env, static_cast<int>(rng.uniform_int(4)), obs);
          ++t;
          REQUIRE(env.observation_space().contains(obs));
          REQUIRE((r.reward == 0 || r.reward == 1 || r.reward == env.final_reward()));
          if (phase == kDistractor) apples += r.reward;
          if (phase == kReward) reward_phase += r.reward;
          REQUIRE((r.success == false || r.terminated));
        }
        CHECK(t == env.max_episode_steps());
        CHECK(reward_phase == (r.success ? env.final_reward() : 0.0f));
        CHECK(apples <= 30);  // within [0, #apples + final]
        successes += r.success ? 1 : 0;
      }
      CHECK(successes > 0);
    }
}

TEST_CASE("visual match: draws match the reference's statistics", "[envs][visual_match]") {
  const auto stats = test::load_memory_rl("pycolab_sampling");
  const int n = stats.at("episodes");
  for (const bool passive : {true, false}) {
    const auto& ref = stats.at(passive ? "PassiveVisualMatch" : "ActiveVisualMatch");
    INFO((passive ? "passive" : "active"));
    VisualMatch env("memory_rl/VM", {.passive = passive});
    REQUIRE(test::cells_in(ref.at("target_cell").at("cells")) == env.target_cells());
    REQUIRE(test::cells_in(ref.at("start_cell").at("cells")) == env.start_cells());
    REQUIRE(test::cells_in(ref.at("apple_cells").at("cells")) ==
            std::vector<Cell>(DistractorPhase::candidates().begin(), DistractorPhase::candidates().end()));
    std::vector<float> obs(75);
    std::vector<int64_t> targets(3, 0), num_apples(DistractorPhase::kApples + 1, 0);
    std::vector<Cell> target_cells, start_cells, apple_cells;
    for (int i = 0; i < n; ++i) {
      env.reset(5'000'000 + static_cast<uint64_t>(i), obs);
      const auto& e = env.episode();
      ++targets[static_cast<size_t>(e.target)];
      target_cells.push_back(e.target_cell);
      start_cells.push_back(e.start_cell);
      ++num_apples[static_cast<size_t>(std::popcount(e.apples))];
      for (int k = 0; k < DistractorPhase::kCandidates; ++k)
        if ((e.apples >> k) & 1u) apple_cells.push_back(DistractorPhase::candidates()[static_cast<size_t>(k)]);
    }
    test::check_same_distribution(targets, ref.at("target").at("counts"), "target colour");
    test::check_same_distribution(test::cell_counts(env.target_cells(), target_cells),
                                  ref.at("target_cell").at("counts"), "target cell");
    test::check_same_distribution(test::cell_counts(env.start_cells(), start_cells), ref.at("start_cell").at("counts"),
                                  "start cell");
    test::check_same_distribution(test::cell_counts(test::cells_in(ref.at("apple_cells").at("cells")), apple_cells),
                                  ref.at("apple_cells").at("counts"), "apple cells");
    CHECK(num_apples == ref.at("num_apples").at("counts").get<std::vector<int64_t>>());  // always 10
  }
  // The permutation: one per instance, over as many instances as the reference built.
  const auto& perms = stats.at("colour_permutation");
  const auto orders = perms.at("permutations").get<std::vector<std::array<int, 3>>>();
  std::vector<int64_t> counts(orders.size(), 0);
  std::vector<float> obs(75);
  for (int i = 0; i < stats.at("instances").get<int>(); ++i) {
    VisualMatch env("memory_rl/PassiveVisualMatch", {});
    env.seed_instance(9'000'000 + static_cast<uint64_t>(i));
    for (size_t k = 0; k < orders.size(); ++k) counts[k] += orders[k] == env.colours() ? 1 : 0;
  }
  test::check_same_distribution(counts, perms.at("counts"), "colour permutation");
}

TEST_CASE("visual match: option errors and misuse", "[envs][visual_match]") {
  CHECK_THROWS_AS(VisualMatch("memory_rl/PassiveVisualMatch", {.variant = "pomdp"}), rlm::EnvError);
  CHECK_THROWS_AS(VisualMatch("memory_rl/PassiveVisualMatch", {.distractor_length = -1}), rlm::EnvError);
  CHECK_THROWS_AS(VisualMatch("memory_rl/PassiveVisualMatch", {.distractor_length = 100001}), rlm::EnvError);
  CHECK(VisualMatch("memory_rl/PassiveVisualMatch", {.distractor_length = 100000}).max_episode_steps() == 100025);
  for (const char* id :
       {"memory_rl/PassiveVisualMatch", "memory_rl/ActiveVisualMatch", "memory_rl-PassiveVisualMatch-v0"})
    CHECK(rlm::envs::env_option_keys(id) == std::vector<std::string>{"variant", "distractor_length"});
  // Through the registry: the options reach the env.
  rlm::EnvOptions options;
  options.variant = "original";
  options.distractor_length = 250;
  auto env = rlm::envs::make_env("memory_rl/ActiveVisualMatch",
                                 {.previous_action = false, .antialias = false, .flatten = false}, options);
  CHECK(env->max_episode_steps() == 15 + 250 + 15);
  CHECK(env->observation_space() == rlm::envs::Space::image(3, 5, 5));
  CHECK(env->action_space() == rlm::envs::Space::discrete(4));
  CHECK(env->reports_success());
  CHECK(rlm::envs::make_env("memory_rl/PassiveVisualMatch", {.flatten = false})->max_episode_steps() == 125);

  VisualMatch vm("memory_rl/PassiveVisualMatch", {.distractor_length = 1});
  std::vector<float> obs(75);
  CHECK_THROWS_AS(step(vm, 0, obs), rlm::EnvError);  // before reset
  vm.reset(1, obs);
  CHECK_THROWS_AS(step(vm, 4, obs), rlm::EnvError);
  CHECK_THROWS_AS(step(vm, -1, obs), rlm::EnvError);
  for (int t = 0; t < vm.max_episode_steps(); ++t) step(vm, 0, obs);
  CHECK_THROWS_AS(step(vm, 0, obs), rlm::EnvError);  // after the end
}
