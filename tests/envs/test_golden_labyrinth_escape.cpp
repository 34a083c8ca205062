// Golden replays of LabyrinthEscape against popgym 1.0.7 (tests/data/popgym,
// scripts/popgym_golden/labyrinth_escape.py): the recorded maze is restored and the recorded actions replayed (random,
// shortest-path and standing-still).
#include "envs/popgym/labyrinth_escape.hpp"
#include "golden.hpp"

using rlm::envs::test::check_golden_replay;
using rlm::envs::test::load_golden;

TEST_CASE("golden: LabyrinthEscape matches popgym at every level", "[golden][labyrinth]") {
  for (const char* level : {"Easy", "Medium", "Hard"}) {
    const std::string name = std::string("LabyrinthEscape") + level;
    check_golden_replay<rlm::envs::popgym::LabyrinthEscape>(name);
    // Upstream's steps draw nothing from env.np_random (mazes come from the global RNGs at reset), so there is no
    // draw to inject: the recorder must have seen none.
    for (const auto& ep : load_golden(name).at("episodes"))
      for (const auto& draws : ep.at("draws")) REQUIRE(draws.empty());
  }
}
