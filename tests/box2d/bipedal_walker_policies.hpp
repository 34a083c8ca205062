// Scripted BipedalWalker controllers for the tests: Gymnasium's heuristic (bipedal_walker.py
// BipedalWalkerHeuristics.step_heuristic, the demo's episode loop), and a stance controller that keeps the walker
// standing on the start pad, for the time-limit tests.
#pragma once
#include <algorithm>
#include <array>
#include <optional>
#include <span>

namespace rlm::envs::test {

/// Gymnasium's walking heuristic: a three-state gait (stay on one leg, put the other down, push off) with PD
/// control of the joints, a head-levelling term on the hips and vertical-speed damping on the knees. It keeps state
/// across steps: use a new one per episode. Gymnasium's demo sends a zero action on the first step and consults the
/// heuristic from the second step on (run_walker_heuristic in the tests does the same).
class BipedalWalkerHeuristic {
 public:
  static constexpr int kStayOnOneLeg = 1, kPutOtherDown = 2, kPushOff = 3;
  static constexpr double kSpeed = 0.29;  ///< faster, and it falls forward
  static constexpr double kSupportKneeAngle = 0.1;

  std::array<float, 4> act(std::span<const float> obs) {
    std::array<double, 24> s{};
    for (size_t i = 0; i < s.size(); ++i) s[i] = obs[i];
    const size_t moving_base = 4 + 5 * static_cast<size_t>(moving_);
    const size_t supporting_base = 4 + 5 * static_cast<size_t>(supporting_);

    std::array<std::optional<double>, 2> hip_targ, knee_targ;  // None in Gymnasium: no command
    std::array<double, 2> hip_todo{0.0, 0.0}, knee_todo{0.0, 0.0};

    // The three states can chain within one step, as the Python ifs (not elifs) do.
    if (state_ == kStayOnOneLeg) {
      hip_targ[moving_] = 1.1;
      knee_targ[moving_] = -0.6;
      supporting_knee_angle_ += 0.03;
      if (s[2] > kSpeed) supporting_knee_angle_ += 0.03;
      supporting_knee_angle_ = std::min(supporting_knee_angle_, kSupportKneeAngle);
      knee_targ[supporting_] = supporting_knee_angle_;
      if (s[supporting_base + 0] < 0.10) state_ = kPutOtherDown;  // the supporting leg is behind
    }
    if (state_ == kPutOtherDown) {
      hip_targ[moving_] = +0.1;
      knee_targ[moving_] = kSupportKneeAngle;
      knee_targ[supporting_] = supporting_knee_angle_;
      if (s[moving_base + 4] != 0.0) {
        state_ = kPushOff;
        supporting_knee_angle_ = std::min(s[moving_base + 2], kSupportKneeAngle);
      }
    }
    if (state_ == kPushOff) {
      knee_targ[moving_] = supporting_knee_angle_;
      knee_targ[supporting_] = +1.0;
      if (s[supporting_base + 2] > 0.88 || s[2] > 1.2 * kSpeed) {
        state_ = kStayOnOneLeg;
        moving_ = 1 - moving_;
        supporting_ = 1 - moving_;
      }
    }

    // Python truthiness: an unset target and a target of exactly 0.0 both give no command.
    auto set = [](const std::optional<double>& t) { return t.has_value() && *t != 0.0; };
    for (size_t l = 0; l < 2; ++l) {
      const size_t b = 4 + 5 * l;
      if (set(hip_targ[l])) hip_todo[l] = 0.9 * (*hip_targ[l] - s[b]) - 0.25 * s[b + 1];
      if (set(knee_targ[l])) knee_todo[l] = 4.0 * (*knee_targ[l] - s[b + 2]) - 0.25 * s[b + 3];
    }
    for (size_t l = 0; l < 2; ++l) {
      hip_todo[l] -= 0.9 * (0 - s[0]) - 1.5 * s[1];  // keep the head level
      knee_todo[l] -= 15.0 * s[3];                   // damp vertical oscillation
    }
    const std::array<double, 4> a{hip_todo[0], knee_todo[0], hip_todo[1], knee_todo[1]};
    std::array<float, 4> out{};
    for (size_t k = 0; k < 4; ++k) out[k] = static_cast<float>(std::clamp(0.5 * a[k], -1.0, 1.0));
    return out;
  }

 private:
  int state_ = kStayOnOneLeg;
  int moving_ = 0, supporting_ = 1;
  double supporting_knee_angle_ = kSupportKneeAngle;
};

/// Stands still: knees pushed straight against their upper limit, hips held by a PD controller at a small
/// straddle, with the heuristic's head-levelling term. The walker never falls on the flat start pad, so an episode
/// runs into the time limit.
inline std::array<float, 4> bipedal_walker_stand(std::span<const float> s) {
  std::array<float, 4> out{};
  const double hip_target[2] = {0.15, -0.15};
  for (size_t l = 0; l < 2; ++l) {
    const size_t b = 4 + 5 * l;
    const double hip = 0.9 * (hip_target[l] - s[b]) - 0.25 * s[b + 1] + 0.9 * s[0] + 1.5 * s[1];
    out[2 * l] = static_cast<float>(std::clamp(hip, -1.0, 1.0));
    out[2 * l + 1] = 1.0f;
  }
  return out;
}

}  // namespace rlm::envs::test
