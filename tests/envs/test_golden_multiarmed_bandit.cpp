// Golden replays of MultiarmedBandit against popgym 1.0.7 (tests/data/popgym,
// scripts/popgym_golden/multiarmed_bandit.py) and its get_state() along recorded trajectories
// (tests/data/popgym/states, scripts/record_popgym_states.py).
#include "envs/popgym/multiarmed_bandit.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

using rlm::envs::test::check_golden_replay;

TEST_CASE("golden: MultiarmedBandit matches popgym at every level", "[golden][bandit]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    check_golden_replay<rlm::envs::popgym::MultiarmedBandit>(std::string("MultiarmedBandit") + level);
}

TEST_CASE("golden: MultiarmedBandit write_state equals popgym's get_state", "[golden][bandit]") {
  // The state (the payout probabilities) is fixed within an episode, so one level checks the layout; the C++ draws
  // differ from numpy's here, which the state does not depend on.
  rlm::envs::test::check_state_replay<rlm::envs::popgym::MultiarmedBandit>("MultiarmedBanditEasy");
}
