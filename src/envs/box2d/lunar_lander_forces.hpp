// What pushes LunarLander around besides gravity and contacts (Gymnasium's lunar_lander.py reset() and step()): the
// engine impulses, a pure function of the lander's pose and the step's two dispersion draws, and the wind and
// turbulence profile. Kept apart from the world so that the geometry (the 17-vs-14 side-engine lever included) and
// the wind formula can be checked without one. Gymnasium evaluates these in Python doubles from the float32 body
// state; the expressions keep its operation order, so the float32 values handed to Box2D round the same way.
#pragma once
#include <cmath>
#include <cstdint>

#include "envs/rng.hpp"

namespace rlm::envs::box2d {

/// tanh(sin(2k·i) + sin(πk·i)) with k = 0.01: Gymnasium's never-periodic wind (× wind_power, N) and turbulence
/// (× turbulence_power, N·m) profile at index i.
inline double lander_wind_profile(int64_t i) {
  constexpr double kPi = 3.14159265358979323846;
  return std::tanh(std::sin(0.02 * static_cast<double>(i)) + std::sin(kPi * 0.01 * static_cast<double>(i)));
}

/// A starting wind or torque index: numpy's integers(−9999, 9999), which excludes its upper bound.
inline int64_t draw_lander_wind_index(Rng& rng) { return -9999 + static_cast<int64_t>(rng.uniform_int(19998)); }

/// A linear impulse `j` (N·s) applied at the world point `p` (m).
struct LanderImpulse {
  double jx = 0, jy = 0;
  double px = 0, py = 0;
};

/// The step's engine frame: tip = (sin θ, cos θ), side = (−cos θ, sin θ), the lander's origin, and the dispersion
/// draws d0, d1 ~ U(−1, 1)/30 (already divided by SCALE).
struct LanderEngineFrame {
  double tip_x, tip_y, side_x, side_y;
  double x, y;
  double d0, d1;
};

namespace lander_engine {
constexpr double kScale = 30.0;
constexpr double kMainEnginePower = 13.0;
constexpr double kSideEnginePower = 0.6;
constexpr double kMainEngineYLocation = 4.0;  // px below the origin
constexpr double kSideEngineHeight = 14.0;    // px
constexpr double kSideEngineAway = 12.0;      // px
constexpr double kSideEngineLever = 17.0;     // px: Gymnasium's literal 17 where SIDE_ENGINE_HEIGHT (14) was meant
}  // namespace lander_engine

/// Main engine at power m ∈ [0.5, 1]: pushes along −tip from a point 4 px below the origin, jittered by 2·d0 along
/// tip and d1 along side.
inline LanderImpulse lander_main_impulse(const LanderEngineFrame& f, double power) {
  using namespace lander_engine;
  const double ox = f.tip_x * (kMainEngineYLocation / kScale + 2 * f.d0) + f.side_x * f.d1;
  const double oy = -f.tip_y * (kMainEngineYLocation / kScale + 2 * f.d0) - f.side_y * f.d1;
  return {-ox * kMainEnginePower * power, -oy * kMainEnginePower * power, f.x + ox, f.y + oy};
}

/// Side engine firing in `direction` (−1: action 1 / a1 < −0.5, pushes towards −x at θ = 0; +1: action 3 / a1 > 0.5)
/// at power s ∈ [0.5, 1]. The application point uses 17 px along tip for x but 14 px for y: the orientation-dependent
/// torque quirk that Gymnasium documents and keeps.
inline LanderImpulse lander_side_impulse(const LanderEngineFrame& f, double direction, double power) {
  using namespace lander_engine;
  const double ox = f.tip_x * f.d0 + f.side_x * (3 * f.d1 + direction * kSideEngineAway / kScale);
  const double oy = -f.tip_y * f.d0 - f.side_y * (3 * f.d1 + direction * kSideEngineAway / kScale);
  return {-ox * kSideEnginePower * power, -oy * kSideEnginePower * power,
          f.x + ox - f.tip_x * kSideEngineLever / kScale, f.y + oy + f.tip_y * kSideEngineHeight / kScale};
}

}  // namespace rlm::envs::box2d
