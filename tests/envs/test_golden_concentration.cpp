// Golden replays of Concentration against popgym 1.0.7: trajectories (tests/data/popgym, scripts/record_popgym.py) and
// get_state() along trajectories (tests/data/popgym/states, scripts/record_popgym_states.py). Steps draw nothing.
#include "envs/popgym/concentration.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

TEST_CASE("golden: Concentration matches popgym at every level", "[golden][concentration]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_golden_replay<rlm::envs::popgym::Concentration>(std::string("Concentration") + level);
}

TEST_CASE("golden: Concentration write_state matches popgym get_state at every level", "[golden][concentration]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_state_replay<rlm::envs::popgym::Concentration>(std::string("Concentration") + level);
}
