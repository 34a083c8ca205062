// Golden replays of HigherLower against popgym 1.0.7: trajectories (tests/data/popgym, scripts/record_popgym.py) and
// get_state() along trajectories (tests/data/popgym/states, scripts/record_popgym_states.py). Steps draw nothing.
#include "envs/popgym/higher_lower.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

TEST_CASE("golden: HigherLower matches popgym at every level", "[golden][higherlower]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_golden_replay<rlm::envs::popgym::HigherLower>(std::string("HigherLower") + level);
}

TEST_CASE("golden: HigherLower write_state matches popgym get_state at every level", "[golden][higherlower]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_state_replay<rlm::envs::popgym::HigherLower>(std::string("HigherLower") + level);
}
