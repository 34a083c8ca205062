// Golden replays of CountRecall against popgym 1.0.7: trajectories (tests/data/popgym, scripts/record_popgym.py) and
// get_state() along trajectories (tests/data/popgym/states, scripts/record_popgym_states.py). Steps draw nothing.
#include "envs/popgym/count_recall.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

TEST_CASE("golden: CountRecall matches popgym at every level", "[golden][countrecall]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_golden_replay<rlm::envs::popgym::CountRecall>(std::string("CountRecall") + level);
}

TEST_CASE("golden: CountRecall write_state matches popgym get_state at every level", "[golden][countrecall]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_state_replay<rlm::envs::popgym::CountRecall>(std::string("CountRecall") + level);
}
