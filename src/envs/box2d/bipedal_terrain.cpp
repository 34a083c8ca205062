// BipedalWalker's terrain generator (Gymnasium's bipedal_walker.py _generate_terrain); see bipedal_terrain.hpp.
#include "envs/box2d/bipedal_terrain.hpp"

#include <fmt/format.h>

#include <cmath>

#include "core/error.hpp"

namespace rlm::envs::box2d::bipedal {
namespace {

// Gymnasium's terrain states: GRASS, STUMP, STAIRS, PIT, _STATES_ = range(5).
constexpr int64_t kGrass = 0, kStump = 1, kStairs = 2, kPit = 3, kStates = 4;

/// np.sign: −1, 0 or +1 (0 exactly at 0, which keeps the start pad flat).
double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

}  // namespace

double TerrainDraws::take(double drawn) {
  ++used_;
  const double value = used_ <= injected_.size() ? injected_[used_ - 1] : drawn;
  if (log_ != nullptr) log_->push_back(value);
  return value;
}

double TerrainDraws::uniform(double low, double high) { return take(rng_.uniform(low, high)); }

double TerrainDraws::random() { return take(rng_.uniform_01()); }

int64_t TerrainDraws::integers(int64_t low, int64_t high) {
  const double drawn =
      static_cast<double>(low + static_cast<int64_t>(rng_.uniform_int(static_cast<uint64_t>(high - low))));
  const double value = take(drawn);
  // An injected value outside the call's range would send the generator into a state Gymnasium never reaches.
  if (!(value >= static_cast<double>(low) && value < static_cast<double>(high)) || value != std::floor(value))
    throw EnvError(fmt::format("BipedalWalker terrain: injected draw {} ({}) is not a value of integers({}, {})",
                               used_ - 1, value, low, high));
  return static_cast<int64_t>(value);
}

void generate_walker_terrain(bool hardcore, TerrainDraws& draws, WalkerTerrain& out) {
  constexpr double ts = kTerrainStep;
  out.obstacles.clear();
  auto add = [&out](TerrainFeature feature, int i, std::array<std::array<double, 2>, 4> poly) {
    out.obstacles.push_back({feature, i, poly});
  };

  int64_t state = kGrass;
  double velocity = 0.0;
  double y = kTerrainHeight;
  int64_t counter = kTerrainStartpad;
  bool oneshot = false;
  int64_t stair_steps = 0, stair_width = 0, stair_height = 0;
  double original_y = 0.0;
  for (int i = 0; i < kTerrainLength; ++i) {
    const double x = i * ts;
    out.x[static_cast<size_t>(i)] = x;

    // The first matching branch, in Gymnasium's order; a oneshot GRASS step matches none (one flat step).
    if (state == kGrass && !oneshot) {
      velocity = 0.8 * velocity + 0.01 * sign(kTerrainHeight - y);
      if (i > kTerrainStartpad) velocity += draws.uniform(-1, 1) / kScale;
      y += velocity;
    } else if (state == kPit && oneshot) {
      counter = draws.integers(3, 5);
      // A wall one step wide hanging 4 steps down from the surface, and a copy `counter` steps to the right.
      const std::array<std::array<double, 2>, 4> poly{{{x, y}, {x + ts, y}, {x + ts, y - 4 * ts}, {x, y - 4 * ts}}};
      add(TerrainFeature::pit, i, poly);
      std::array<std::array<double, 2>, 4> shifted = poly;
      for (auto& p : shifted) p[0] = p[0] + ts * static_cast<double>(counter);
      add(TerrainFeature::pit, i, shifted);
      counter += 2;
      original_y = y;
    } else if (state == kPit && !oneshot) {
      y = original_y;
      if (counter > 1) y -= 4 * ts;
    } else if (state == kStump && oneshot) {
      counter = draws.integers(1, 3);
      const double side = static_cast<double>(counter) * ts;
      add(TerrainFeature::stump, i, {{{x, y}, {x + side, y}, {x + side, y + side}, {x, y + side}}});
    } else if (state == kStairs && oneshot) {
      // Three draws in this order, the width included although integers(4, 5) can only return 4.
      stair_height = draws.random() > 0.5 ? +1 : -1;
      stair_width = draws.integers(4, 5);
      stair_steps = draws.integers(3, 5);
      original_y = y;
      for (int64_t s = 0; s < stair_steps; ++s) {
        const double left = x + static_cast<double>(s * stair_width) * ts;
        const double right = x + static_cast<double>((1 + s) * stair_width) * ts;
        const double top = y + static_cast<double>(s * stair_height) * ts;
        const double bottom = y + static_cast<double>(-1 + s * stair_height) * ts;
        add(TerrainFeature::stairs, i, {{{left, top}, {right, top}, {right, bottom}, {left, bottom}}});
      }
      counter = stair_steps * stair_width;
    } else if (state == kStairs && !oneshot) {
      const int64_t s = stair_steps * stair_width - counter - stair_height;
      const double n = static_cast<double>(s) / static_cast<double>(stair_width);  // Python 3's true division
      y = original_y + (n * static_cast<double>(stair_height)) * ts;
    }

    oneshot = false;
    out.y[static_cast<size_t>(i)] = y;
    counter -= 1;
    if (counter == 0) {
      counter = draws.integers(kTerrainGrass / 2, kTerrainGrass);  // 5..9
      // Hardcore follows each grass run with an obstacle, drawn after the run length; everything else goes back
      // to grass, whose first (oneshot) step is flat.
      state = (state == kGrass && hardcore) ? draws.integers(1, kStates) : kGrass;
      oneshot = true;
    }
  }
}

}  // namespace rlm::envs::box2d::bipedal
