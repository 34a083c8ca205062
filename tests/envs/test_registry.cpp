// Registry: generated ids, both spellings, closest-id suggestions, wrapper order.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "envs/registry.hpp"

using namespace rlm::envs;

TEST_CASE("registry lists every family at three levels", "[registry]") {
  const std::vector<std::string> want = {
      "popgym/RepeatFirstEasy",          "popgym/RepeatFirstMedium",          "popgym/RepeatFirstHard",
      "popgym/RepeatPreviousEasy",       "popgym/RepeatPreviousMedium",       "popgym/RepeatPreviousHard",
      "popgym/PositionOnlyCartPoleEasy", "popgym/PositionOnlyCartPoleMedium", "popgym/PositionOnlyCartPoleHard"};
  CHECK(registered_env_ids() == want);
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
