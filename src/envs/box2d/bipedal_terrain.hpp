// BipedalWalker's terrain generator (Farama-Foundation/Gymnasium@3f0476a:gymnasium/envs/box2d/bipedal_walker.py
// _generate_terrain): a pure function of the draws, with no Box2D in it, so tests can check it exactly for chosen
// draws. The env turns the result into static bodies in the same order Gymnasium creates them (the obstacle
// polygons as the loop meets them, then the 199 edges left to right).
// The draws are made in Gymnasium's call order (= the loop order) but come from the framework Rng, not numpy's
// stream (why: docs/envs/box2d.md); TerrainDraws can substitute chosen values for them (a test hook).
// Clouds (10 × 11 more uniform draws in Gymnasium) are cosmetic and skipped.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "envs/rng.hpp"

namespace rlm::envs::box2d::bipedal {

// Gymnasium's constants and names. Lengths in metres (pixels / SCALE).
inline constexpr double kScale = 30.0;                             ///< pixels per metre
inline constexpr double kViewportW = 600.0, kViewportH = 400.0;    ///< pixels
inline constexpr double kTerrainStep = 14.0 / kScale;              ///< TS, the x spacing of terrain points
inline constexpr int kTerrainLength = 200;                         ///< terrain points
inline constexpr double kTerrainHeight = kViewportH / kScale / 4;  ///< TH = H/4, the start pad's height
inline constexpr int kTerrainGrass = 10;                           ///< grass runs last integers(5, 10) steps
inline constexpr int kTerrainStartpad = 20;  ///< the first grass run; no height draws for i ≤ 20
inline constexpr double kFriction = 2.5;     ///< every terrain fixture

/// Which obstacle an obstacle polygon belongs to (Gymnasium's STUMP = 1, STAIRS = 2, PIT = 3).
enum class TerrainFeature : uint8_t { stump = 1, stairs = 2, pit = 3 };

/// One static obstacle polygon (hardcore only): a pit wall, a stump or one stair step.
struct TerrainObstacle {
  TerrainFeature feature;
  int index;  ///< the loop index i at which the feature was drawn (its left edge lies at x = i·TS)
  std::array<std::array<double, 2>, 4> vertices;  ///< in Gymnasium's order, before Box2D reorders them (m)
};

/// The generator's output: 200 points (x_i, y_i), joined by 199 edges, and the obstacle polygons in creation order.
struct WalkerTerrain {
  std::array<double, kTerrainLength> x{}, y{};
  std::vector<TerrainObstacle> obstacles;
};

/// The generator's source of randomness, one method per numpy call it makes. Every value is drawn from the Rng
/// (so the stream stays the same whatever is injected) and then, while injected values remain, replaced by the
/// next one: what numpy's call would return (uniform(−1, 1)'s value; integers(a, b)'s integer, a ≤ v < b;
/// random()'s value). `log`, when given, receives every value used, in order.
class TerrainDraws {
 public:
  TerrainDraws(Rng& rng, std::span<const double> injected, std::vector<double>* log)
      : rng_(rng), injected_(injected), log_(log) {}

  double uniform(double low, double high);      ///< numpy uniform(low, high)
  int64_t integers(int64_t low, int64_t high);  ///< numpy integers(low, high): uniform on [low, high − 1]
  double random();                              ///< numpy random(): U[0, 1)
  size_t used() const { return used_; }         ///< draws made so far

 private:
  double take(double drawn);

  Rng& rng_;
  std::span<const double> injected_;
  std::vector<double>* log_;
  size_t used_ = 0;
};

/// Fills `out` (its obstacle vector is cleared and reused, so a reused WalkerTerrain does not allocate once its
/// capacity suffices). Throws rlm::EnvError when an injected integer draw is not a valid value of its call.
void generate_walker_terrain(bool hardcore, TerrainDraws& draws, WalkerTerrain& out);

}  // namespace rlm::envs::box2d::bipedal
