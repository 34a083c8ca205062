// Golden replays of PositionOnlyPendulum against popgym 1.0.7: obs, rewards and flags (tests/data/popgym, recorded by
// scripts/record_popgym.py with scripts/popgym_golden/position_only_pendulum.py), and get_state()
// (tests/data/popgym/states, scripts/record_popgym_states.py).
#include "envs/popgym/position_only_pendulum.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

TEST_CASE("golden: PositionOnlyPendulum matches popgym at every level", "[golden][pendulum]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_golden_replay<rlm::envs::popgym::PositionOnlyPendulum>(std::string("PositionOnlyPendulum") +
                                                                                  level);
}

TEST_CASE("golden: PositionOnlyPendulum write_state equals popgym's get_state at every level", "[golden][pendulum]") {
  // states/<name>.json from scripts/record_popgym_states.py.
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_state_replay<rlm::envs::popgym::PositionOnlyPendulum>(std::string("PositionOnlyPendulum") +
                                                                                 level);
}
