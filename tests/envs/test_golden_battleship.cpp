// Golden replays of Battleship against popgym 1.0.7 (tests/data/popgym, scripts/popgym_golden/battleship.py) and its
// get_state() along recorded trajectories (tests/data/popgym/states, scripts/record_popgym_states.py).
#include "envs/popgym/battleship.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

using rlm::envs::test::check_golden_replay;

TEST_CASE("golden: Battleship matches popgym at every level", "[golden][battleship]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    check_golden_replay<rlm::envs::popgym::Battleship>(std::string("Battleship") + level);
}

TEST_CASE("golden: Battleship write_state equals popgym's get_state at every level", "[golden][battleship]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_state_replay<rlm::envs::popgym::Battleship>(std::string("Battleship") + level);
}
