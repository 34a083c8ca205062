// Box2D 2.3's revolute-joint limits, emulated on 2.4.1 (our choice: docs/envs/box2d.md). Gymnasium's pybox2d runs
// Box2D 2.3, whose joint limit is a constraint only on the steps that begin with the joint at or past the limit
// (b2RevoluteJoint::InitVelocityConstraints sets e_inactiveLimit otherwise): a motor can drive a joint that starts
// inside its range far past the limit within one step, and the next steps pull it back. 2.4.1's limit is
// speculative: it acts before the joint reaches the limit and holds it there. The walker shows it on its first
// agent step: after a knee action of +1, Gymnasium's knee ends 0.8 rad above its upper limit, 2.4.1's at it.
// Enabling each limit only while the joint is at or past it reproduces 2.3's activation rule (the solver that then
// enforces it stays 2.4.1's); measured in docs/RESULTS.md, "Box2D against Gymnasium".
#pragma once
#include <box2d/box2d.h>

namespace rlm::envs::box2d {

/// Call before each world step: enables `joint`'s limit iff its angle lies at or outside [lower, upper]. Toggling a
/// limit wakes both bodies in 2.4.1 (not in 2.3), so bodies that slept stay asleep.
inline void apply_box2d23_limit_rule(b2RevoluteJoint* joint) {
  const float angle = joint->GetJointAngle();
  const bool active = angle <= joint->GetLowerLimit() || angle >= joint->GetUpperLimit();
  if (active == joint->IsLimitEnabled()) return;
  b2Body* a = joint->GetBodyA();
  b2Body* b = joint->GetBodyB();
  const bool a_awake = a->IsAwake(), b_awake = b->IsAwake();
  joint->EnableLimit(active);
  if (!a_awake) a->SetAwake(false);
  if (!b_awake) b->SetAwake(false);
}

}  // namespace rlm::envs::box2d
