// Key-to-Door (Memory-RL envs/key_to_door/key_to_door.py) and the distractor phase it shares with Visual Match: golden
// replays of the reference's episodes (scripts/record_memory_rl_pycolab.py), our draws against the reference's
// statistics, and its rules: phase lengths, the one-frame indicator, the door that blocks without the key and is drawn
// over the player, apple respawn at pickup + 21, the return bounds [0, #apples + final] and option errors.
#include <bit>
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "envs/memory_rl/key_to_door.hpp"
#include "envs/rng.hpp"
#include "pycolab_test_util.hpp"

using rlm::envs::memory_rl::KeyToDoor;
using namespace rlm::envs::memory_rl::pycolab;
namespace test = rlm::envs::test;

namespace {

rlm::envs::StepResult step(KeyToDoor& env, int action, std::vector<float>& obs) {
  const float a = static_cast<float>(action);
  return env.step({&a, 1}, obs);
}

nlohmann::json draws(Cell key, Cell start) {
  nlohmann::json apples = nlohmann::json::array();
  for (int i = 0; i < DistractorPhase::kApples; ++i) {
    const Cell c = DistractorPhase::candidates()[static_cast<size_t>(i)];
    apples.push_back({c.row, c.col});
  }
  return {{"key_cell", {key.row, key.col}}, {"start_cell", {start.row, start.col}}, {"apple_cells", apples}};
}

constexpr std::array<float, 3> kWhite{255, 255, 255}, kWall{25, 25, 25}, kFloor{204, 204, 204}, kPlayer{228, 148, 109},
    kDoor{134, 206, 235}, kKey{159, 81, 44}, kApple{140, 178, 0};

/// South (blocked at the start rows' bottom wall and at the distractor start) until the reward phase.
void skip_to_reward_phase(KeyToDoor& env, std::vector<float>& obs) {
  while (env.timer().phase != kReward) step(env, 1, obs);
}

}  // namespace

TEST_CASE("key to door: replays Memory-RL's trajectories exactly", "[envs][key_to_door]") {
  for (const std::string variant : {"shm", "original"})
    for (int d : {5, 25}) {
      const std::string file = "KeyToDoor_" + variant + "_D" + std::to_string(d);
      const auto cover = test::check_pycolab_golden<KeyToDoor>(file);
      INFO(file);
      CHECK(cover.episodes >= 3);
      CHECK(cover.successes >= 1);  // the scripted optimal policy opened the door
      CHECK(cover.failures >= 1);
      CHECK(cover.apple_reward > 0);
    }
}

TEST_CASE("key to door: phase lengths and the episode length", "[envs][key_to_door]") {
  struct Case {
    std::string variant;
    int distractor_length, explore, distractor, reward;
  };
  for (const Case& c : {Case{"shm", 0, 10, 100, 3}, Case{"original", 0, 15, 60, 10}, Case{"shm", 4, 10, 4, 3},
                        Case{"original", 500, 15, 500, 10}}) {
    INFO(c.variant << " D " << c.distractor_length);
    KeyToDoor env("memory_rl/KeyToDoor", {.variant = c.variant, .distractor_length = c.distractor_length});
    CHECK(env.max_episode_steps() == c.explore + c.distractor + c.reward);
    std::vector<float> obs(75);
    env.reset(9, obs);
    rlm::envs::Rng rng(4);
    for (int t = 1; t <= env.max_episode_steps(); ++t) {
      INFO("step " << t);
      const auto r = step(env, static_cast<int>(rng.uniform_int(4)), obs);
      CHECK(r.terminated == (t == env.max_episode_steps()));
      CHECK_FALSE(r.truncated);
      if (r.terminated) break;
      CHECK(env.timer().phase == (t < c.explore ? kExplore : t < c.explore + c.distractor ? kDistractor : kReward));
      if (t == c.explore + c.distractor) {  // the reward room's first frame
        CHECK(env.player() == KeyToDoor::kRewardStart);
        CHECK(test::view_rgb(obs, 0, 2) == kDoor);  // the door two cells north
      }
    }
  }
  CHECK(rlm::envs::make_env("memory_rl/KeyToDoor", {.flatten = false})->max_episode_steps() == 113);
}

TEST_CASE("key to door: the indicator shows on the pickup frame only", "[envs][key_to_door]") {
  KeyToDoor env("memory_rl/KeyToDoor", {.variant = "original", .distractor_length = 5});
  std::vector<float> obs(75);
  env.restore_golden(draws({2, 5}, {4, 5}), obs);
  CHECK(test::view_rgb(obs, 0, 2) == kKey);  // (2, 5) seen from (4, 5)
  step(env, 0, obs);                         // (3, 5)
  CHECK_FALSE(env.has_key());
  CHECK_FALSE(env.indicator_visible());
  step(env, 0, obs);  // onto the key
  CHECK(env.has_key());
  CHECK(env.indicator_visible());
  CHECK(test::view_rgb(obs, 2, 2) == kPlayer);  // the key is gone, the player on its cell
  CHECK(test::view_rgb(obs, 0, 2) == kWhite);   // the indicator at (0, 5), over the top wall
  step(env, 0, obs);                            // (1, 5)
  CHECK_FALSE(env.indicator_visible());
  CHECK(test::view_rgb(obs, 1, 2) == kWall);  // (0, 5) is a wall again
  step(env, 1, obs);                          // back onto the key cell: no second showing
  CHECK(env.player() == Cell{2, 5});
  CHECK_FALSE(env.indicator_visible());
  CHECK(test::view_rgb(obs, 0, 2) == kWall);
  CHECK(test::view_rgb(obs, 2, 2) == kPlayer);
  for (int a : {2, 2}) step(env, a, obs);  // west: the key cell (2, 5) shows floor now
  CHECK(test::view_rgb(obs, 2, 4) == kFloor);
}

TEST_CASE("key to door: the door blocks without the key and pays once with it", "[envs][key_to_door]") {
  for (const std::string variant : {"shm", "original"}) {
    INFO(variant);
    KeyToDoor env("memory_rl/KeyToDoor", {.variant = variant, .distractor_length = 1});
    const float final_reward = variant == "shm" ? 10.0f : 5.0f;
    CHECK(env.final_reward() == final_reward);
    std::vector<float> obs(75);

    // No key: the player starts at (5, 3), the key at (1, 7), and only walks south (blocked).
    env.restore_golden(draws({1, 7}, {5, 3}), obs);
    skip_to_reward_phase(env, obs);
    CHECK_FALSE(env.has_key());
    rlm::envs::StepResult r;
    float total = 0;
    while (!r.terminated) total += (r = step(env, 0, obs)).reward;  // north, into the closed door
    CHECK(env.player() == Cell{2, 5});
    CHECK(total == 0);
    CHECK_FALSE(r.success);

    // With the key: two moves north open the door and pay; standing on it shows the door over the player.
    env.restore_golden(draws({1, 4}, {4, 4}), obs);
    for (int a : {0, 0, 0}) step(env, a, obs);  // (3, 4) through the gap, (2, 4), (1, 4): the key
    CHECK(env.has_key());
    skip_to_reward_phase(env, obs);
    CHECK(env.has_key());  // carried through the distractor phase
    total = step(env, 0, obs).reward;
    CHECK(total == 0);
    r = step(env, 0, obs);
    total += r.reward;
    CHECK(env.player() == KeyToDoor::kDoorCell);
    CHECK(total == final_reward);
    CHECK_FALSE(env.has_key());                 // spent
    CHECK(test::view_rgb(obs, 2, 2) == kDoor);  // the door is drawn over the player
    CHECK_FALSE(r.terminated);                  // 3 (shm) or 10 reward-phase steps
    while (!r.terminated) {
      r = step(env, env.player() == KeyToDoor::kDoorCell ? 1 : 0, obs);  // off the door and on again
      total += r.reward;
    }
    CHECK(total == final_reward);  // once only
    CHECK(r.success);
  }
}

TEST_CASE("distractor phase: apples respawn 21 frames after pickup", "[envs][key_to_door][visual_match]") {
  const int idx = DistractorPhase::candidate_index({5, 3});
  DistractorPhase phase;
  phase.start(uint32_t{1} << idx, 1.0f);
  CHECK(phase.player() == DistractorPhase::kStart);
  CHECK(phase.board().at({5, 3}) == 'a');
  CHECK(phase.update(2, 1) == 0);  // (5, 4)
  CHECK(phase.update(2, 2) == 1);  // (5, 3): eaten on frame 2
  CHECK_FALSE(phase.apple_at(idx));
  CHECK(phase.update(3, 3) == 0);  // back east
  CHECK(phase.update(3, 4) == 0);
  for (int frame = 5; frame <= 22; ++frame) {
    CHECK(phase.update(1, frame) == 0);  // south: blocked
    CHECK(phase.apple_at(idx) == (frame >= 23));
  }
  CHECK(phase.update(1, 23) == 0);
  CHECK(phase.apple_at(idx));  // 2 + 21
  CHECK(phase.board().at({5, 3}) == 'a');
  CHECK(phase.update(2, 24) == 0);
  CHECK(phase.update(2, 25) == 1);  // eaten again

  // Respawning under the player: shown under it, eaten on the next frame it is still there.
  phase.start(uint32_t{1} << idx, 1.0f);
  phase.update(2, 1);
  CHECK(phase.update(2, 2) == 1);
  for (int frame = 3; frame <= 22; ++frame) CHECK(phase.update(1, frame) == 0);  // south: the wall, stays on (5, 3)
  CHECK(phase.update(1, 23) == 0);                                               // back, under the player
  CHECK(phase.apple_at(idx));
  CHECK(phase.board().at({5, 3}) == '+');  // the player is drawn on top
  CHECK(phase.update(1, 24) == 1);
  CHECK_FALSE(phase.apple_at(idx));

  // Each draw keeps exactly 10 of the 22 cells; never-eaten apples stay, and nothing grows elsewhere.
  rlm::envs::Rng rng(3);
  for (int i = 0; i < 100; ++i) {
    const uint32_t mask = DistractorPhase::draw_apples(rng);
    CHECK(std::popcount(mask) == DistractorPhase::kApples);
    CHECK(mask < (uint32_t{1} << DistractorPhase::kCandidates));
  }
  phase.start(DistractorPhase::draw_apples(rng), 1.0f);
  for (int frame = 1; frame <= 60; ++frame) phase.update(1, frame);  // south: never moves
  CHECK(phase.apples_left() == DistractorPhase::kApples);
}

TEST_CASE("key to door: the view is centred on the player and padded with background", "[envs][key_to_door]") {
  KeyToDoor env("memory_rl/KeyToDoor", {.variant = "shm", .distractor_length = 30});
  std::vector<float> obs(75);
  auto state = draws({1, 3}, {5, 7});
  state["apple_cells"][0] = {5, 3};
  state["apple_cells"][1] = {4, 4};
  env.restore_golden(state, obs);
  CHECK(test::view_rgb(obs, 2, 2) == kPlayer);
  CHECK(test::view_rgb(obs, 4, 0) == kFloor);   // (7, 5): beyond the board's last row
  CHECK(test::view_rgb(obs, 3, 2) == kWall);    // (6, 7)
  CHECK(test::view_rgb(obs, 2, 3) == kWall);    // (5, 8)
  CHECK(test::view_rgb(obs, 2, 4) == kFloor);   // (5, 9): outside the room
  step(env, 0, obs);                            // (4, 7)
  CHECK(test::view_rgb(obs, 2, 2) == kPlayer);  // re-centred
  CHECK(test::view_rgb(obs, 3, 2) == kFloor);   // (5, 7), where it stood
  while (env.timer().phase == kExplore) step(env, 1, obs);
  // The distractor start (5, 5): walls below, apples at (5, 3) and (4, 4), the rest of the draw out of view.
  CHECK(test::view_rgb(obs, 3, 2) == kWall);
  CHECK(test::view_rgb(obs, 2, 0) == kApple);
  CHECK(test::view_rgb(obs, 1, 1) == kApple);
  CHECK(test::view_rgb(obs, 1, 3) == kFloor);  // (4, 6): no apple in this draw
  for (int i = 0; i < 25; ++i) {
    const auto rgb = test::view_rgb(obs, i / 5, i % 5);
    CHECK((rgb == kWall || rgb == kFloor || rgb == kPlayer || rgb == kApple));
  }
}

TEST_CASE("key to door: returns are apples plus the final reward on success", "[envs][key_to_door]") {
  for (const std::string variant : {"shm", "original"}) {
    INFO(variant);
    KeyToDoor env("memory_rl/KeyToDoor", {.variant = variant, .distractor_length = 30});
    std::vector<float> obs(75);
    rlm::envs::Rng rng(8);
    int keys = 0;
    for (uint64_t seed = 0; seed < 300; ++seed) {
      env.reset(seed, obs);
      float apples = 0, reward_phase = 0;
      bool had_key = false;
      rlm::envs::StepResult r;
      while (!r.terminated) {
        const Phase phase = env.timer().phase;
        r = step(env, static_cast<int>(rng.uniform_int(4)), obs);
        REQUIRE(env.observation_space().contains(obs));
        if (phase == kDistractor) apples += r.reward;
        if (phase == kReward) reward_phase += r.reward;
        if (phase == kExplore && env.timer().phase == kDistractor) had_key = env.has_key();
      }
      CHECK(reward_phase == (r.success ? env.final_reward() : 0.0f));
      if (r.success) CHECK(had_key);  // no key, no success
      CHECK(apples >= 0);
      CHECK(apples <= 30);  // within [0, #apples + final]
      keys += had_key ? 1 : 0;
    }
    CHECK(keys > 0);
  }
}

TEST_CASE("key to door: draws match the reference's statistics", "[envs][key_to_door]") {
  const auto stats = test::load_memory_rl("pycolab_sampling");
  const auto& ref = stats.at("KeyToDoor");
  const int n = stats.at("episodes");
  KeyToDoor env("memory_rl/KeyToDoor", {});
  REQUIRE(test::cells_in(ref.at("key_cell").at("cells")) == env.key_cells());
  REQUIRE(test::cells_in(ref.at("start_cell").at("cells")) == env.start_cells());
  const auto apple_cells_ref = test::cells_in(ref.at("apple_cells").at("cells"));
  REQUIRE(apple_cells_ref ==
          std::vector<Cell>(DistractorPhase::candidates().begin(), DistractorPhase::candidates().end()));
  std::vector<float> obs(75);
  std::vector<Cell> keys, starts, apples;
  std::vector<int64_t> num_apples(DistractorPhase::kApples + 1, 0);
  for (int i = 0; i < n; ++i) {
    env.reset(7'000'000 + static_cast<uint64_t>(i), obs);
    const auto& e = env.episode();
    keys.push_back(e.key_cell);
    starts.push_back(e.start_cell);
    ++num_apples[static_cast<size_t>(std::popcount(e.apples))];
    for (int k = 0; k < DistractorPhase::kCandidates; ++k)
      if ((e.apples >> k) & 1u) apples.push_back(DistractorPhase::candidates()[static_cast<size_t>(k)]);
  }
  test::check_same_distribution(test::cell_counts(env.key_cells(), keys), ref.at("key_cell").at("counts"), "key cell");
  test::check_same_distribution(test::cell_counts(env.start_cells(), starts), ref.at("start_cell").at("counts"),
                                "start cell");
  test::check_same_distribution(test::cell_counts(apple_cells_ref, apples), ref.at("apple_cells").at("counts"),
                                "apple cells");
  CHECK(num_apples == ref.at("num_apples").at("counts").get<std::vector<int64_t>>());
}

TEST_CASE("key to door: option errors and misuse", "[envs][key_to_door]") {
  CHECK_THROWS_AS(KeyToDoor("memory_rl/KeyToDoor", {.variant = "cca"}), rlm::EnvError);
  CHECK_THROWS_AS(KeyToDoor("memory_rl/KeyToDoor", {.distractor_length = -5}), rlm::EnvError);
  CHECK_THROWS_AS(KeyToDoor("memory_rl/KeyToDoor", {.distractor_length = 100001}), rlm::EnvError);
  CHECK(rlm::envs::env_option_keys("memory_rl/KeyToDoor") == std::vector<std::string>{"variant", "distractor_length"});
  CHECK(rlm::envs::env_option_keys("memory_rl/TMazePassive") ==
        std::vector<std::string>{"corridor_length", "distract_reward"});
  rlm::EnvOptions options;
  options.variant = "original";
  auto env = rlm::envs::make_env("memory_rl-KeyToDoor-v0", {.flatten = false}, options);
  CHECK(env->id() == "memory_rl/KeyToDoor");
  CHECK(env->max_episode_steps() == 85);
  CHECK(env->reports_success());

  KeyToDoor ktd("memory_rl/KeyToDoor", {.distractor_length = 1});
  std::vector<float> obs(75);
  CHECK_THROWS_AS(step(ktd, 1, obs), rlm::EnvError);  // before reset
  ktd.reset(2, obs);
  CHECK_THROWS_AS(step(ktd, 7, obs), rlm::EnvError);
  const float half = 0.5f;
  CHECK_THROWS_AS(ktd.step({&half, 1}, obs), rlm::EnvError);
  for (int t = 0; t < ktd.max_episode_steps(); ++t) step(ktd, 1, obs);
  CHECK_THROWS_AS(step(ktd, 1, obs), rlm::EnvError);  // after the end
}
