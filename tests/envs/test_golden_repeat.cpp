// Golden replays of RepeatFirst and RepeatPrevious against popgym 1.0.7 (tests/data/popgym, scripts/record_popgym.py).
#include "envs/popgym/repeat_first.hpp"
#include "envs/popgym/repeat_previous.hpp"
#include "golden.hpp"

using rlm::envs::test::check_golden_replay;

TEST_CASE("golden: RepeatFirst matches popgym at every level", "[golden]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    check_golden_replay<rlm::envs::popgym::RepeatFirst>(std::string("RepeatFirst") + level);
}

TEST_CASE("golden: RepeatPrevious matches popgym at every level", "[golden]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    check_golden_replay<rlm::envs::popgym::RepeatPrevious>(std::string("RepeatPrevious") + level);
}
