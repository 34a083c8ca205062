// Registry: generated ids, both spellings, closest-id suggestions, wrapper order.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "env_test_util.hpp"
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

namespace {

/// One non-default value per env.options key, so that a test can set each key alone.
const std::vector<std::pair<std::string, std::function<void(rlm::EnvOptions&)>>>& option_changes() {
  static const std::vector<std::pair<std::string, std::function<void(rlm::EnvOptions&)>>> changes = {
      {"corridor_length", [](rlm::EnvOptions& o) { o.corridor_length = 3; }},
      {"distract_reward", [](rlm::EnvOptions& o) { o.distract_reward = 0.5; }},
      {"request_cost", [](rlm::EnvOptions& o) { o.request_cost = 0.1; }},
      {"sigma_low", [](rlm::EnvOptions& o) { o.sigma_low = 0.5; }},
      {"sigma_high", [](rlm::EnvOptions& o) { o.sigma_high = 3.0; }},
      {"variant", [](rlm::EnvOptions& o) { o.variant = "original"; }},
      {"train_tasks", [](rlm::EnvOptions& o) { o.train_tasks = 10; }},
      {"task_split", [](rlm::EnvOptions& o) { o.task_split = "eval"; }},
      {"distractor_length", [](rlm::EnvOptions& o) { o.distractor_length = 5; }},
      {"obs_noise_sigma", [](rlm::EnvOptions& o) { o.obs_noise_sigma = 0.3; }},
      {"noise_on_binary", [](rlm::EnvOptions& o) { o.noise_on_binary = false; }},
      {"action_noise_sigma", [](rlm::EnvOptions& o) { o.action_noise_sigma = 0.3; }},
      {"gravity", [](rlm::EnvOptions& o) { o.gravity = -5.0; }},
      {"enable_wind", [](rlm::EnvOptions& o) { o.enable_wind = true; }},
      {"wind_power", [](rlm::EnvOptions& o) { o.wind_power = 5.0; }},
      {"turbulence_power", [](rlm::EnvOptions& o) { o.turbulence_power = 0.5; }},
      {"lidar_in_p", [](rlm::EnvOptions& o) { o.lidar_in_p = false; }},
      {"contacts_in_v", [](rlm::EnvOptions& o) { o.contacts_in_v = true; }},
      {"box2d23_limits", [](rlm::EnvOptions& o) { o.box2d23_limits = false; }},
  };
  return changes;
}

/// Every key EnvOptions declares, in visit() order.
struct KeyNames {
  std::vector<std::string> keys;
  template <class T, class... Check>
  void field(std::string_view name, const T&, const Check&...) {
    keys.emplace_back(name);
  }
};

/// What an env built with `options` shows in two seeded episodes of at most 40 random steps, as text.
std::string fingerprint(const std::string& id, const rlm::EnvOptions& options) {
  const auto env = make_env(id, {.previous_action = false, .antialias = false, .flatten = false}, options);
  std::string out = fmt::format("{} {} {}\n", env->observation_space().to_string(), env->action_space().to_string(),
                                env->max_episode_steps());
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    const auto episode = test::run_episode(*env, seed, test::random_policy(env->action_space(), seed), 40);
    for (const auto& obs : episode.obs) out += fmt::format("{}\n", fmt::join(obs, " "));
    out += fmt::format("{} | {} | {}\n", fmt::join(episode.rewards, " "), fmt::join(episode.terminated, " "),
                       fmt::join(episode.truncated, " "));
  }
  return out;
}

}  // namespace

// env_option_keys(id) is derived from the option groups each registry row names; this holds it to what the factories
// really read: any key an id does not list, set alone to another value, leaves its env's episodes unchanged.
TEST_CASE("registry: an env.options key that an id does not list does not change its env", "[registry]") {
  KeyNames names;
  rlm::EnvOptions().visit(names);
  std::vector<std::string> listed;
  for (const auto& [key, change] : option_changes()) listed.push_back(key);
  REQUIRE(listed == names.keys);  // a new option needs a row in option_changes()

  for (const std::string& id : registered_env_ids()) {
    const auto& reads = env_option_keys(id);
    CHECK(env_option_keys(gym_style_id(id)) == reads);
    const std::string baseline = fingerprint(id, {});
    for (const auto& [key, change] : option_changes()) {
      if (std::ranges::count(reads, key) > 0) continue;
      INFO(id << " with only env.options." << key << " changed");
      rlm::EnvOptions options;
      change(options);
      try {
        const std::string with_change = fingerprint(id, options);
        CHECK(with_change == baseline);
      } catch (const rlm::EnvError& e) {  // or refused by the env itself (action noise on a discrete lander)
        CHECK_THAT(e.what(), Catch::Contains(gym_style_id(id)));
      }
    }
  }
  // Listed keys do reach their envs (one per group where 40 random steps show it; the envs' own tests check each
  // value's effect, the task split's among them).
  const auto changed = [](const std::function<void(rlm::EnvOptions&)>& change) {
    rlm::EnvOptions options;
    change(options);
    return options;
  };
  const auto change_of = [&](std::string_view key) {
    return std::ranges::find(option_changes(), key, [](const auto& row) { return row.first; })->second;
  };
  for (const auto& [id, key] : std::vector<std::pair<std::string, std::string>>{
           {"memory_rl/TMazePassive", "corridor_length"},
           {"kf/BestArm", "sigma_high"},
           {"meta/Wind", "variant"},
           {"meta/PointRobot", "variant"},
           {"memory_rl/KeyToDoor", "distractor_length"},
           {"box2d/LunarLander", "obs_noise_sigma"},
           {"box2d/LunarLanderContinuous", "action_noise_sigma"},
           {"box2d/LunarLander-V", "gravity"},
           {"box2d/BipedalWalker-P", "lidar_in_p"},
           {"box2d/BipedalWalker-V", "contacts_in_v"},
       }) {
    INFO(id << " with env.options." << key << " changed");
    REQUIRE(std::ranges::count(env_option_keys(id), key) == 1);
    CHECK(fingerprint(id, changed(change_of(key))) != fingerprint(id, {}));
  }
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
