// BipedalWalker-v3 / BipedalWalkerHardcore-v3 on Box2D 2.4.1 (Gymnasium's bipedal_walker.py); see bipedal_walker.hpp.
#include "envs/box2d/bipedal_walker.hpp"

#include <box2d/box2d.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "envs/box2d/box2d23_limits.hpp"
#include "envs/box2d/contact_detector.hpp"

namespace rlm::envs::box2d {
namespace {

using namespace bipedal;  // the terrain constants (TS, TH, SCALE, ...)

// Gymnasium's constants and names; lengths in metres.
constexpr double kFps = 50.0;
constexpr int kVelocityIterations = 6 * 30;
constexpr int kPositionIterations = 2 * 30;
constexpr double kMotorsTorque = 80.0;
constexpr double kSpeedHip = 4.0, kSpeedKnee = 6.0;
constexpr double kLidarRange = 160.0 / kScale;
constexpr double kInitialRandom = 5.0;  ///< the reset push, N along x
constexpr double kLegDown = -8.0 / kScale;
constexpr double kLegW = 8.0 / kScale, kLegH = 34.0 / kScale;
constexpr double kHullPoly[5][2] = {{-30, +9}, {+6, +9}, {+34, +1}, {+34, -8}, {-30, -8}};  // pixels
constexpr uint16 kWalkerCategory = 0x0020, kGroundCategory = 0x0001;
/// The finish line: the hull's origin beyond the last grass run, (TERRAIN_LENGTH − TERRAIN_GRASS)·TS.
constexpr double kFinishX = (kTerrainLength - kTerrainGrass) * kTerrainStep;

double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }  // np.sign, 0 at 0

b2Vec2 vec(double x, double y) { return b2Vec2(static_cast<float>(x), static_cast<float>(y)); }

/// Gymnasium's observation bounds (declared, never enforced): the contacts' upper bound is 5, not 1.
Space observation_bounds() {
  const auto pi = static_cast<float>(3.14159265358979323846);
  std::vector<float> low{-pi, -5, -5, -5, -pi, -5, -pi, -5, -0.0f, -pi, -5, -pi, -5, -0.0f};
  std::vector<float> high{pi, 5, 5, 5, pi, 5, pi, 5, 5, pi, 5, pi, 5, 5};
  low.resize(BipedalWalker::kObsDim, -1.0f);
  high.resize(BipedalWalker::kObsDim, 1.0f);
  return Space::box(std::move(low), std::move(high));
}

}  // namespace

/// Gymnasium's LidarCallback: ignores fixtures without category bit 1 (the walker's own parts) and clips the ray at
/// every hit, so the fraction left at the end is the closest hit, or 1 when nothing was hit.
class BipedalWalker::LidarCallback final : public b2RayCastCallback {
 public:
  float ReportFixture(b2Fixture* fixture, const b2Vec2&, const b2Vec2&, float fraction) override {
    if ((fixture->GetFilterData().categoryBits & 1) == 0) return -1.0f;
    this->fraction = fraction;
    return fraction;
  }
  float fraction = 1.0f;
};

BipedalWalker::BipedalWalker(std::string id, BipedalWalkerConfig config)
    : id_(std::move(id)),
      config_(config),
      max_steps_(config.max_episode_steps > 0 ? config.max_episode_steps : (config.hardcore ? 2000 : 1600)),
      observation_space_(observation_bounds()),
      action_space_(Space::box({-1, -1, -1, -1}, {1, 1, 1, 1})),
      contacts_(std::make_unique<ContactDetector>()) {
  if (config.max_episode_steps < 0)
    throw EnvError(fmt::format("{}: max_episode_steps must be positive (0: the default), got {}", gym_style_id(id_),
                               config.max_episode_steps));
  // Room for every obstacle of a hardcore course and every terrain draw, so resets do not grow these vectors.
  terrain_.obstacles.reserve(4 * kTerrainLength);
  terrain_draws_.reserve(2 * kTerrainLength);
}

BipedalWalker::~BipedalWalker() = default;

void BipedalWalker::build_world() {
  // A new world every reset (our choice: docs/envs/box2d.md); the old one goes first, and with it every body and joint.
  world_.reset();
  world_ = std::make_unique<b2World>(b2Vec2(0.0f, -10.0f));  // pybox2d's default gravity
  world_->SetContactListener(contacts_.get());

  // Terrain, in Gymnasium's creation order: the obstacle polygons as the generator met them, then the edges.
  b2BodyDef static_def;  // static, at the origin
  {
    b2PolygonShape shape;
    b2FixtureDef fd;
    fd.shape = &shape;
    fd.friction = static_cast<float>(kFriction);
    for (const bipedal::TerrainObstacle& o : terrain_.obstacles) {
      b2Vec2 pts[4];
      for (size_t v = 0; v < 4; ++v) pts[v] = vec(o.vertices[v][0], o.vertices[v][1]);
      shape.Set(pts, 4);  // recomputes the convex hull, as pybox2d's vertices setter does
      world_->CreateBody(&static_def)->CreateFixture(&fd);
    }
  }
  {
    // Two-sided edges without ghost vertices: 2.3's edge. One-sided edges or a chain would smooth the joints
    // between segments and change the walking.
    b2EdgeShape shape;
    b2FixtureDef fd;
    fd.shape = &shape;
    fd.friction = static_cast<float>(kFriction);
    fd.filter.categoryBits = kGroundCategory;
    for (size_t i = 0; i + 1 < static_cast<size_t>(kTerrainLength); ++i) {
      shape.SetTwoSided(vec(terrain_.x[i], terrain_.y[i]), vec(terrain_.x[i + 1], terrain_.y[i + 1]));
      world_->CreateBody(&static_def)->CreateFixture(&fd);
    }
  }

  // The hull, then its push: the one draw after the terrain (Gymnasium's clouds come between, skipped).
  const double init_x = kTerrainStep * kTerrainStartpad / 2;
  const double init_y = kTerrainHeight + 2 * kLegH;
  b2BodyDef hull_def;
  hull_def.type = b2_dynamicBody;
  hull_def.position = vec(init_x, init_y);
  hull_ = world_->CreateBody(&hull_def);
  {
    b2Vec2 pts[5];
    for (size_t v = 0; v < 5; ++v) pts[v] = vec(kHullPoly[v][0] / kScale, kHullPoly[v][1] / kScale);
    b2PolygonShape shape;
    shape.Set(pts, 5);
    b2FixtureDef fd;
    fd.shape = &shape;
    fd.density = 5.0f;
    fd.friction = 0.1f;
    fd.restitution = 0.0f;
    fd.filter.categoryBits = kWalkerCategory;
    fd.filter.maskBits = kGroundCategory;
    hull_->CreateFixture(&fd);
  }
  const double drawn_force = rng_.uniform(-kInitialRandom, kInitialRandom);
  initial_force_ = draws_.initial_force.value_or(drawn_force);
  hull_->ApplyForceToCenter(vec(initial_force_, 0.0), true);

  // Legs, i = −1 then +1: upper leg, hip, lower leg, knee. The boxes take half-extents; friction stays 0.2.
  b2PolygonShape upper_shape, lower_shape;
  upper_shape.SetAsBox(static_cast<float>(kLegW / 2), static_cast<float>(kLegH / 2));
  lower_shape.SetAsBox(static_cast<float>(0.8 * kLegW / 2), static_cast<float>(kLegH / 2));
  b2FixtureDef leg_fd;
  leg_fd.density = 1.0f;
  leg_fd.restitution = 0.0f;
  leg_fd.filter.categoryBits = kWalkerCategory;
  leg_fd.filter.maskBits = kGroundCategory;
  for (int side = 0; side < 2; ++side) {
    const int i = side == 0 ? -1 : +1;
    b2BodyDef leg_def;
    leg_def.type = b2_dynamicBody;
    leg_def.angle = static_cast<float>(i * 0.05);
    // Gymnasium's quirk, kept: the positions subtract LEG_DOWN where the hip anchor adds it.
    leg_def.position = vec(init_x, init_y - kLegH / 2 - kLegDown);
    b2Body* upper = world_->CreateBody(&leg_def);
    leg_fd.shape = &upper_shape;
    upper->CreateFixture(&leg_fd);

    b2RevoluteJointDef hip;
    hip.bodyA = hull_;
    hip.bodyB = upper;
    hip.localAnchorA = vec(0.0, kLegDown);
    hip.localAnchorB = vec(0.0, kLegH / 2);
    // pybox2d's revoluteJointDef(bodyA=, bodyB=) sets referenceAngle = bodyB.angle − bodyA.angle (±0.05 here;
    // Box2D_joints.i); Box2D's C++ default of 0 would shift the hip observations by ∓0.05. Never Initialize(),
    // which would recompute the anchors.
    hip.referenceAngle = upper->GetAngle() - hull_->GetAngle();
    hip.enableMotor = true;
    hip.enableLimit = true;
    hip.maxMotorTorque = static_cast<float>(kMotorsTorque);
    hip.motorSpeed = static_cast<float>(i);
    hip.lowerAngle = -0.8f;
    hip.upperAngle = 1.1f;
    legs_[2 * static_cast<size_t>(side)] = upper;
    joints_[2 * static_cast<size_t>(side)] = static_cast<b2RevoluteJoint*>(world_->CreateJoint(&hip));

    leg_def.position = vec(init_x, init_y - kLegH * 3 / 2 - kLegDown);
    b2Body* lower = world_->CreateBody(&leg_def);
    leg_fd.shape = &lower_shape;
    lower->CreateFixture(&leg_fd);

    b2RevoluteJointDef knee;
    knee.bodyA = upper;
    knee.bodyB = lower;
    knee.localAnchorA = vec(0.0, -kLegH / 2);
    knee.localAnchorB = vec(0.0, kLegH / 2);
    knee.referenceAngle = lower->GetAngle() - upper->GetAngle();  // 0: both legs start at the same angle
    knee.enableMotor = true;
    knee.enableLimit = true;
    knee.maxMotorTorque = static_cast<float>(kMotorsTorque);
    knee.motorSpeed = 1.0f;
    knee.lowerAngle = -1.6f;
    knee.upperAngle = -0.1f;  // the knee starts at 0, above this limit: the initial bend
    legs_[2 * static_cast<size_t>(side) + 1] = lower;
    joints_[2 * static_cast<size_t>(side) + 1] = static_cast<b2RevoluteJoint*>(world_->CreateJoint(&knee));
  }
  // The hull touching anything is game over; the lower legs' flags are the foot contacts. Walker parts never touch
  // each other (category 0x20 is not in mask 0x01), so every contact is with the terrain.
  contacts_->watch(hull_, {legs_[1], legs_[3]});
}

void BipedalWalker::reset(uint64_t seed, std::span<float> obs) {
  running_ = false;  // until the new episode is built (an injected draw may be refused)
  rng_.reseed(seed);
  terrain_draws_.clear();
  bipedal::TerrainDraws draws(rng_, draws_.terrain, &terrain_draws_);
  generate_walker_terrain(config_.hardcore, draws, terrain_);
  build_world();
  prev_shaping_.reset();
  // Gymnasium returns the observation of step(zeros): it snaps the hip anchors together and sets prev_shaping;
  // its reward (0) and any termination are discarded.
  simulate({0.0, 0.0, 0.0, 0.0}, obs);
  end_ = WalkerEnd::none;
  terminated_ = false;
  t_ = 0;
  running_ = true;
}

double BipedalWalker::simulate(const std::array<double, kActionDim>& action, std::span<float> obs) {
  // 1. Motors: torque control through a velocity motor saturated at 80·|a| (the control_speed branch is dead).
  static constexpr double kSpeed[kActionDim] = {kSpeedHip, kSpeedKnee, kSpeedHip, kSpeedKnee};
  for (size_t k = 0; k < kActionDim; ++k) {
    joints_[k]->SetMotorSpeed(static_cast<float>(kSpeed[k] * sign(action[k])));
    joints_[k]->SetMaxMotorTorque(static_cast<float>(kMotorsTorque * std::clamp(std::abs(action[k]), 0.0, 1.0)));
  }
  // 2.4.1's setters wake the bodies only when the value changes; 2.3's always woke them (b2RevoluteJoint.cpp).
  if (config_.emulate_box2d23_wake) {
    if (!hull_->IsAwake()) hull_->SetAwake(true);
    for (b2Body* leg : legs_)
      if (!leg->IsAwake()) leg->SetAwake(true);
  }

  // 2. Physics.
  if (config_.emulate_box2d23_limits)
    for (b2RevoluteJoint* joint : joints_) apply_box2d23_limit_rule(joint);
  world_->Step(static_cast<float>(1.0 / kFps), kVelocityIterations, kPositionIterations);

  // 3. Lidar: world-fixed rays from the hull origin, from straight down (i = 0) towards +x.
  const b2Vec2 pos = hull_->GetPosition();
  const b2Vec2 vel = hull_->GetLinearVelocity();
  std::array<double, kLidarRays> lidar{};
  for (int i = 0; i < kLidarRays; ++i) {
    LidarCallback ray;
    const double angle = 1.5 * i / 10.0;
    const b2Vec2 p2 = vec(pos.x + std::sin(angle) * kLidarRange, pos.y - std::cos(angle) * kLidarRange);
    world_->RayCast(&ray, pos, p2);
    lidar[static_cast<size_t>(i)] = ray.fraction;
  }

  // 4. Observation, in double as Gymnasium computes it, cast to float32 at the end.
  std::array<double, kObsDim> s{};
  s[0] = hull_->GetAngle();
  s[1] = 2.0 * hull_->GetAngularVelocity() / kFps;
  s[2] = 0.3 * vel.x * (kViewportW / kScale) / kFps;
  s[3] = 0.3 * vel.y * (kViewportH / kScale) / kFps;
  for (size_t side = 0; side < 2; ++side) {
    const b2RevoluteJoint* hip = joints_[2 * side];
    const b2RevoluteJoint* knee = joints_[2 * side + 1];
    const size_t b = 4 + 5 * side;
    s[b] = hip->GetJointAngle();
    s[b + 1] = hip->GetJointSpeed() / kSpeedHip;
    s[b + 2] = knee->GetJointAngle() + 1.0;
    s[b + 3] = knee->GetJointSpeed() / kSpeedKnee;
    s[b + 4] = contacts_->leg_contact(side) ? 1.0 : 0.0;
  }
  for (size_t i = 0; i < kLidarRays; ++i) s[14 + i] = lidar[i];
  for (size_t i = 0; i < kObsDim; ++i) obs[i] = static_cast<float>(s[i]);

  // 5. Reward: progress along x minus a head-tilt penalty, as a shaping difference, minus the motor cost.
  const double shaping = 130 * static_cast<double>(pos.x) / kScale - 5.0 * std::abs(s[0]);
  double reward = prev_shaping_ ? shaping - *prev_shaping_ : 0.0;
  prev_shaping_ = shaping;
  for (size_t k = 0; k < kActionDim; ++k) reward -= 0.00035 * kMotorsTorque * std::clamp(std::abs(action[k]), 0.0, 1.0);

  // 6. Termination: a fall or leaving on the left replaces the reward; the finish adds nothing.
  terminated_ = false;
  end_ = WalkerEnd::none;
  if (contacts_->body_touched() || pos.x < 0) {
    reward = -100;
    terminated_ = true;
    end_ = contacts_->body_touched() ? WalkerEnd::fell : WalkerEnd::out_of_bounds;
  }
  if (pos.x > kFinishX) {
    terminated_ = true;
    if (end_ == WalkerEnd::none) end_ = WalkerEnd::finished;  // a fall on the line counts as the fall (−100)
  }
  return reward;
}

StepResult BipedalWalker::step(std::span<const float> action, std::span<float> obs) {
  if (action.size() != kActionDim) [[unlikely]]
    throw_invalid_action(id_, action, action_space_);
  std::array<double, kActionDim> a{};
  for (size_t k = 0; k < kActionDim; ++k) {
    if (!std::isfinite(action[k])) [[unlikely]]
      throw_invalid_action(id_, action, action_space_);
    a[k] = action[k];
  }
  if (!running_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");

  const double reward = simulate(a, obs);
  ++t_;
  StepResult r;
  r.reward = static_cast<float>(reward);
  r.terminated = terminated_;
  r.truncated = t_ >= max_steps_;
  r.success = end_ == WalkerEnd::finished;
  running_ = !(r.terminated || r.truncated);
  return r;
}

bool BipedalWalker::game_over() const { return contacts_->body_touched(); }

bool BipedalWalker::leg_contact(int leg) const { return contacts_->leg_contact(static_cast<size_t>(leg)); }

}  // namespace rlm::envs::box2d
