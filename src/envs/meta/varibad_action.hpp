// pomdp-baselines' VariBadWrapper action mapping (envs/meta/wrappers.py), shared by the meta-RL toys (Wind, Point
// Robot): the policy acts in [−1, 1]; the wrapper clips to [−1, 1], maps onto the env's Box(lb, ub) as
// lb + (a + 1)·0.5·(ub − lb) and clips to [lb, ub]. The policy's action reaches it as float32 (ptu.get_numpy) and the
// bounds are float32 arrays, so numpy computes all of it in float32; so do we, which the golden replays need to match
// bit for bit. The build does not contract the multiply-add into an FMA (no -march), which would round differently.
#pragma once
#include <algorithm>

namespace rlm::envs::meta {

/// One component: a policy action (any float; clipped) onto [−bound, bound], the env's Box(−bound, bound).
inline float varibad_action(float a, float bound) {
  const float lb = -bound, ub = bound;
  const float clipped = std::clamp(a, -1.0f, 1.0f);
  const float mapped = lb + (clipped + 1.0f) * 0.5f * (ub - lb);
  return std::clamp(mapped, lb, ub);
}

}  // namespace rlm::envs::meta
