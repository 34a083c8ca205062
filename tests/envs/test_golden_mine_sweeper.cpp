// Golden replays of MineSweeper against popgym 1.0.7 (tests/data/popgym, scripts/popgym_golden/mine_sweeper.py) and its
// get_state() along recorded trajectories (tests/data/popgym/states, scripts/record_popgym_states.py).
#include "envs/popgym/mine_sweeper.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

using rlm::envs::test::check_golden_replay;

TEST_CASE("golden: MineSweeper matches popgym at every level", "[golden][minesweeper]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    check_golden_replay<rlm::envs::popgym::MineSweeper>(std::string("MineSweeper") + level);
}

TEST_CASE("golden: MineSweeper write_state equals popgym's get_state at every level", "[golden][minesweeper]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_state_replay<rlm::envs::popgym::MineSweeper>(std::string("MineSweeper") + level);
}
