// Registry: generated ids, both spellings, closest-id suggestions, wrapper order.
#include <algorithm>
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "envs/registry.hpp"

using namespace rlm::envs;

TEST_CASE("registry holds exactly the 48 ids popgym 1.0.7 registers, in both spellings", "[registry]") {
  // gymnasium.registry of popgym==1.0.7 (mazelib installed), sorted.
  const std::vector<std::string> upstream = {"popgym-AutoencodeEasy-v0",
                                             "popgym-AutoencodeHard-v0",
                                             "popgym-AutoencodeMedium-v0",
                                             "popgym-BattleshipEasy-v0",
                                             "popgym-BattleshipHard-v0",
                                             "popgym-BattleshipMedium-v0",
                                             "popgym-ConcentrationEasy-v0",
                                             "popgym-ConcentrationHard-v0",
                                             "popgym-ConcentrationMedium-v0",
                                             "popgym-CountRecallEasy-v0",
                                             "popgym-CountRecallHard-v0",
                                             "popgym-CountRecallMedium-v0",
                                             "popgym-HigherLowerEasy-v0",
                                             "popgym-HigherLowerHard-v0",
                                             "popgym-HigherLowerMedium-v0",
                                             "popgym-LabyrinthEscapeEasy-v0",
                                             "popgym-LabyrinthEscapeHard-v0",
                                             "popgym-LabyrinthEscapeMedium-v0",
                                             "popgym-LabyrinthExploreEasy-v0",
                                             "popgym-LabyrinthExploreHard-v0",
                                             "popgym-LabyrinthExploreMedium-v0",
                                             "popgym-MineSweeperEasy-v0",
                                             "popgym-MineSweeperHard-v0",
                                             "popgym-MineSweeperMedium-v0",
                                             "popgym-MultiarmedBanditEasy-v0",
                                             "popgym-MultiarmedBanditHard-v0",
                                             "popgym-MultiarmedBanditMedium-v0",
                                             "popgym-NoisyPositionOnlyCartPoleEasy-v0",
                                             "popgym-NoisyPositionOnlyCartPoleHard-v0",
                                             "popgym-NoisyPositionOnlyCartPoleMedium-v0",
                                             "popgym-NoisyPositionOnlyPendulumEasy-v0",
                                             "popgym-NoisyPositionOnlyPendulumHard-v0",
                                             "popgym-NoisyPositionOnlyPendulumMedium-v0",
                                             "popgym-PositionOnlyCartPoleEasy-v0",
                                             "popgym-PositionOnlyCartPoleHard-v0",
                                             "popgym-PositionOnlyCartPoleMedium-v0",
                                             "popgym-PositionOnlyPendulumEasy-v0",
                                             "popgym-PositionOnlyPendulumHard-v0",
                                             "popgym-PositionOnlyPendulumMedium-v0",
                                             "popgym-RepeatFirstEasy-v0",
                                             "popgym-RepeatFirstHard-v0",
                                             "popgym-RepeatFirstMedium-v0",
                                             "popgym-RepeatPreviousEasy-v0",
                                             "popgym-RepeatPreviousHard-v0",
                                             "popgym-RepeatPreviousMedium-v0",
                                             "popgym-VelocityOnlyCartpoleEasy-v0",
                                             "popgym-VelocityOnlyCartpoleHard-v0",
                                             "popgym-VelocityOnlyCartpoleMedium-v0"};
  std::vector<std::string> ours;
  for (const auto& gym_id : upstream) ours.push_back(canonical_env_id(gym_id));
  std::vector<std::string> registered;
  for (const auto& id : registered_env_ids())
    if (id.starts_with("popgym/")) registered.push_back(id);
  std::sort(ours.begin(), ours.end());
  std::sort(registered.begin(), registered.end());
  CHECK(registered == ours);
  for (const auto& gym_id : upstream) CHECK(gym_style_id(canonical_env_id(gym_id)) == gym_id);
}

TEST_CASE("registry: the parameterised families have one id each, built from env.options", "[registry]") {
  const auto ids = registered_env_ids();
  for (const std::string id : {"memory_rl/TMazePassive", "memory_rl/TMazeActive"}) {
    INFO(id);
    CHECK(std::count(ids.begin(), ids.end(), id) == 1);
    CHECK(canonical_env_id(gym_style_id(id)) == id);
  }
  rlm::EnvOptions options;
  options.corridor_length = 50;
  CHECK(make_env("memory_rl/TMazePassive", {}, options)->max_episode_steps() == 51);
  CHECK(make_env("memory_rl-TMazeActive-v0", {}, options)->max_episode_steps() == 53);
  CHECK(make_env("memory_rl/TMazePassive")->max_episode_steps() == 11);  // Memory-RL's default length 10
}

TEST_CASE("canonical_env_id accepts both spellings", "[registry]") {
  CHECK(canonical_env_id("popgym/RepeatFirstEasy") == "popgym/RepeatFirstEasy");
  CHECK(canonical_env_id("popgym-RepeatFirstEasy-v0") == "popgym/RepeatFirstEasy");
  CHECK(canonical_env_id("popgym-PositionOnlyCartPoleHard-v0") == "popgym/PositionOnlyCartPoleHard");
  for (const std::string& id : registered_env_ids()) CHECK(canonical_env_id(gym_style_id(id)) == id);
  CHECK(make_env("popgym-RepeatPreviousMedium-v0")->id() == "popgym/RepeatPreviousMedium");
}

TEST_CASE("unknown ids list up to 3 closest registered ids", "[registry]") {
  try {
    canonical_env_id("popgym/RepeatFirstEsy");
    FAIL("no exception");
  } catch (const rlm::EnvError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::StartsWith("unknown env id 'popgym/RepeatFirstEsy' (did you mean popgym/RepeatFirstEasy, "));
    CHECK(std::count(msg.begin(), msg.end(), ',') == 2);
    CHECK_THAT(msg, Catch::EndsWith("?)"));
  }
  CHECK_THROWS_WITH(canonical_env_id("popgym-PositionOnlyCartpoleHard-v0"),
                    Catch::Contains("did you mean popgym/PositionOnlyCartPoleHard,"));
  CHECK_THROWS_AS(canonical_env_id("popgym-RepeatFirstEasy-v1"), rlm::EnvError);
  CHECK_THROWS_AS(canonical_env_id(""), rlm::EnvError);
  CHECK_THROWS_AS(make_env("nope"), rlm::EnvError);
}

TEST_CASE("make_env flattens by default and stacks wrappers in the paper order", "[registry]") {
  CHECK(make_env("popgym/RepeatFirstEasy")->observation_space().to_string() == "Box(4)");
  CHECK(make_env("popgym/RepeatFirstEasy", {.previous_action = false, .antialias = false, .flatten = false})
            ->observation_space()
            .to_string() == "Discrete(4)");
  // PreviousAction inside Antialias: the action comes before is_t0.
  CHECK(make_env("popgym/RepeatFirstEasy", {.previous_action = true, .antialias = true, .flatten = false})
            ->observation_space() == Space::tuple({Space::discrete(4), Space::discrete(4), Space::discrete(2)}));
}
