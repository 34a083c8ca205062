// Golden replays of NoisyPositionOnlyCartPole against popgym 1.0.7: obs, rewards and flags (tests/data/popgym, recorded
// by scripts/record_popgym.py with scripts/popgym_golden/noisy_position_only_cart_pole.py; the noise popgym drew at
// reset and at every step is injected), and get_state() (tests/data/popgym/states, scripts/record_popgym_states.py).
#include "envs/popgym/noisy_position_only_cartpole.hpp"
#include "golden.hpp"
#include "state_golden.hpp"

TEST_CASE("golden: NoisyPositionOnlyCartPole matches popgym at every level", "[golden][cartpole]") {
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_golden_replay<rlm::envs::popgym::NoisyPositionOnlyCartPole>(
        std::string("NoisyPositionOnlyCartPole") + level);
}

TEST_CASE("golden: NoisyPositionOnlyCartPole write_state equals popgym's get_state at every level",
          "[golden][cartpole]") {
  // states/<name>.json from scripts/record_popgym_states.py (the state is noise-free, so nothing needs injecting).
  for (const char* level : {"Easy", "Medium", "Hard"})
    rlm::envs::test::check_state_replay<rlm::envs::popgym::NoisyPositionOnlyCartPole>(
        std::string("NoisyPositionOnlyCartPole") + level);
}
