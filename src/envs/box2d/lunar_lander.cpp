// LunarLander-v3 / LunarLanderContinuous-v3 on Box2D 2.4.1 (Gymnasium's lunar_lander.py); see lunar_lander.hpp.
#include "envs/box2d/lunar_lander.hpp"

#include <box2d/box2d.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "envs/box2d/box2d23_limits.hpp"
#include "envs/box2d/contact_detector.hpp"
#include "envs/box2d/lunar_lander_forces.hpp"

namespace rlm::envs::box2d {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Gymnasium's constants. Lengths in px are divided by SCALE in double, as Python does, and rounded to float32 only
// where they enter Box2D.
constexpr double kScale = 30.0;
constexpr double kFps = 50.0;
constexpr double kW = 600.0 / kScale;  // viewport width, 20 m
constexpr double kH = 400.0 / kScale;  // viewport height, 13.333 m
constexpr double kHelipadY = kH / 4;
constexpr double kLegAway = 20.0, kLegDown = 18.0, kLegW = 2.0, kLegH = 8.0;
constexpr float kLegSpringTorque = 40.0f;
constexpr double kLanderPoly[6][2] = {{-14, 17}, {-17, 0}, {-17, -10}, {17, -10}, {17, 0}, {14, 17}};
constexpr int kVelocityIterations = 6 * 30, kPositionIterations = 2 * 30;
constexpr double kFuelMain = 0.30, kFuelSide = 0.03;
constexpr double kTerminalReward = 100.0;

// Collision filters: the lander (0x10) and legs (0x20) collide only with the moon (0x01), never with each other.
constexpr uint16 kMoonCategory = 0x0001, kLanderCategory = 0x0010, kLegCategory = 0x0020;

}  // namespace

LunarLander::LunarLander(std::string id, LunarLanderConfig config)
    : id_(std::move(id)),
      config_(config),
      // Declared by Gymnasium, never enforced.
      observation_space_(Space::box({-2.5f, -2.5f, -10.0f, -10.0f, static_cast<float>(-2 * kPi), -10.0f, 0.0f, 0.0f},
                                    {2.5f, 2.5f, 10.0f, 10.0f, static_cast<float>(2 * kPi), 10.0f, 1.0f, 1.0f})),
      action_space_(config.continuous ? Space::box({-1.0f, -1.0f}, {1.0f, 1.0f}) : Space::discrete(4)),
      contacts_(std::make_unique<ContactDetector>()) {
  if (!(config.gravity > -12.0 && config.gravity < 0.0))
    throw EnvError(fmt::format("{}: gravity must lie in (-12, 0), got {}", id_, config.gravity));
  // Gymnasium only warns outside [0, 20] and [0, 2]; a non-finite value has no meaning at all.
  if (!std::isfinite(config.wind_power) || !std::isfinite(config.turbulence_power))
    throw EnvError(fmt::format("{}: wind_power and turbulence_power must be finite, got {} and {}", id_,
                               config.wind_power, config.turbulence_power));
  if (!(config.initial_random >= 0.0) || !std::isfinite(config.initial_random))
    throw EnvError(fmt::format("{}: initial_random must be a finite force >= 0, got {}", id_, config.initial_random));
  if (config.max_episode_steps < 1)
    throw EnvError(fmt::format("{}: max_episode_steps must be at least 1, got {}", id_, config.max_episode_steps));
}

LunarLander::~LunarLander() = default;

void LunarLander::build_world() {
  // Gymnasium's reset(), step 1: a new world every episode (v3's fix for its issue #728). The old one goes first:
  // its bodies are the ones the listener compares against.
  world_.reset();
  lander_ = moon_ = nullptr;
  legs_ = {nullptr, nullptr};
  joints_ = {nullptr, nullptr};
  world_ = std::make_unique<b2World>(b2Vec2(0.0f, static_cast<float>(config_.gravity)));
  world_->SetContactListener(contacts_.get());
  prev_shaping_.reset();

  // Step 2, terrain: all 12 heights are drawn although h[11] only enters through the wrap-around.
  std::array<double, kChunks + 1> height;
  for (double& h : height) h = rng_.uniform(0.0, kH / 2);
  if (draws_.heights) height = *draws_.heights;
  for (int i = kChunks / 2 - 2; i <= kChunks / 2 + 2; ++i) height[static_cast<size_t>(i)] = kHelipadY;
  std::array<double, kChunks> chunk_x;
  for (int i = 0; i < kChunks; ++i) chunk_x[static_cast<size_t>(i)] = kW / (kChunks - 1) * i;
  for (size_t i = 0; i < kChunks; ++i) {
    // 0.33, not 1/3, and height[-1] is Python's height[11]: the pad ends up at 0.99·H/4.
    const double left = i == 0 ? height[kChunks] : height[i - 1];
    smooth_y_[i] = 0.33 * (left + height[i] + height[i + 1]);
  }

  // Step 3, the moon: one static body, a base edge with the default fixture, then the 10 terrain edges.
  b2BodyDef moon_def;
  moon_ = world_->CreateBody(&moon_def);
  b2EdgeShape edge;
  edge.SetTwoSided(b2Vec2(0.0f, 0.0f), b2Vec2(static_cast<float>(kW), 0.0f));
  b2FixtureDef base;
  base.shape = &edge;
  moon_->CreateFixture(&base);
  for (size_t i = 0; i + 1 < kChunks; ++i) {
    edge.SetTwoSided(b2Vec2(static_cast<float>(chunk_x[i]), static_cast<float>(smooth_y_[i])),
                     b2Vec2(static_cast<float>(chunk_x[i + 1]), static_cast<float>(smooth_y_[i + 1])));
    b2FixtureDef fd;
    fd.shape = &edge;
    fd.density = 0.0f;
    fd.friction = 0.1f;
    moon_->CreateFixture(&fd);
  }

  // Step 4, the lander body at the top centre.
  const double initial_x = kW / 2, initial_y = kH;
  b2BodyDef lander_def;
  lander_def.type = b2_dynamicBody;
  lander_def.position.Set(static_cast<float>(initial_x), static_cast<float>(initial_y));
  lander_def.angle = 0.0f;
  lander_ = world_->CreateBody(&lander_def);
  b2Vec2 poly[6];
  for (int k = 0; k < 6; ++k)
    poly[k].Set(static_cast<float>(kLanderPoly[k][0] / kScale), static_cast<float>(kLanderPoly[k][1] / kScale));
  b2PolygonShape lander_shape;
  lander_shape.Set(poly, 6);
  b2FixtureDef lander_fd;
  lander_fd.shape = &lander_shape;
  lander_fd.density = 5.0f;
  lander_fd.friction = 0.1f;
  lander_fd.restitution = 0.0f;
  lander_fd.filter.categoryBits = kLanderCategory;
  lander_fd.filter.maskBits = kMoonCategory;
  lander_->CreateFixture(&lander_fd);

  // Step 5, the push: a force, so it acts during the reset step only.
  double fx = rng_.uniform(-config_.initial_random, config_.initial_random);
  double fy = rng_.uniform(-config_.initial_random, config_.initial_random);
  if (draws_.initial_force) {
    fx = (*draws_.initial_force)[0];
    fy = (*draws_.initial_force)[1];
  }
  lander_->ApplyForceToCenter(b2Vec2(static_cast<float>(fx), static_cast<float>(fy)), true);

  // Step 6, wind phases, only drawn with wind on.
  if (config_.enable_wind) {
    wind_idx_ = draw_lander_wind_index(rng_);
    torque_idx_ = draw_lander_wind_index(rng_);
    if (draws_.wind_indices) {
      wind_idx_ = (*draws_.wind_indices)[0];
      torque_idx_ = (*draws_.wind_indices)[1];
    }
  } else {
    wind_idx_ = torque_idx_ = 0;
  }

  // Step 7, the legs: i = −1 (legs_[0], on the +x side), then i = +1.
  for (int k = 0; k < 2; ++k) {
    const double i = k == 0 ? -1.0 : 1.0;
    b2BodyDef leg_def;
    leg_def.type = b2_dynamicBody;
    leg_def.position.Set(static_cast<float>(initial_x - i * kLegAway / kScale), static_cast<float>(initial_y));
    leg_def.angle = static_cast<float>(i * 0.05);
    b2Body* leg = world_->CreateBody(&leg_def);
    b2PolygonShape box;
    box.SetAsBox(static_cast<float>(kLegW / kScale), static_cast<float>(kLegH / kScale));  // half-extents: 4×16 px
    b2FixtureDef leg_fd;  // friction stays at the default 0.2
    leg_fd.shape = &box;
    leg_fd.density = 1.0f;
    leg_fd.restitution = 0.0f;
    leg_fd.filter.categoryBits = kLegCategory;
    leg_fd.filter.maskBits = kMoonCategory;
    leg->CreateFixture(&leg_fd);
    legs_[static_cast<size_t>(k)] = leg;

    b2RevoluteJointDef rjd;
    rjd.bodyA = lander_;
    rjd.bodyB = leg;
    rjd.localAnchorA.Set(0.0f, 0.0f);
    // The anchors do not coincide at creation (B's sits 0.63 m above A's); the first step snaps the legs down.
    rjd.localAnchorB.Set(static_cast<float>(i * kLegAway / kScale), static_cast<float>(kLegDown / kScale));
    // pybox2d's revoluteJointDef sets referenceAngle = bodyB.angle − bodyA.angle when given both bodies.
    rjd.referenceAngle = leg->GetAngle() - lander_->GetAngle();
    rjd.enableMotor = true;
    rjd.enableLimit = true;
    rjd.maxMotorTorque = kLegSpringTorque;
    rjd.motorSpeed = static_cast<float>(0.3 * i);
    if (k == 0) {
      rjd.lowerAngle = static_cast<float>(0.9 - 0.5);
      rjd.upperAngle = 0.9f;
    } else {
      rjd.lowerAngle = -0.9f;
      rjd.upperAngle = static_cast<float>(-0.9 + 0.5);
    }
    joints_[static_cast<size_t>(k)] = static_cast<b2RevoluteJoint*>(world_->CreateJoint(&rjd));
  }
  // Step 8: no exhaust particles (render only; their dispersion draws happen in simulate() regardless).
  contacts_->watch(lander_, {legs_[0], legs_[1]});
}

double LunarLander::simulate(double main_power, double side_direction, double side_power, std::span<float> obs) {
  // Gymnasium's step(), step 1: wind and turbulence while airborne; their phases pause while a leg touches.
  if (config_.enable_wind && !(contacts_->leg_contact(0) || contacts_->leg_contact(1))) {
    const double wind = lander_wind_profile(wind_idx_) * config_.wind_power;
    ++wind_idx_;
    lander_->ApplyForceToCenter(b2Vec2(static_cast<float>(wind), 0.0f), true);
    const double torque = lander_wind_profile(torque_idx_) * config_.turbulence_power;
    ++torque_idx_;
    lander_->ApplyTorque(static_cast<float>(torque), true);
  }

  // Step 3: the engine frame and the two dispersion draws, taken every step whatever the action.
  const double angle = lander_->GetAngle();
  const b2Vec2 origin = lander_->GetPosition();
  LanderEngineFrame frame{};
  frame.tip_x = std::sin(angle);
  frame.tip_y = std::cos(angle);
  frame.side_x = -frame.tip_y;
  frame.side_y = frame.tip_x;
  frame.x = origin.x;
  frame.y = origin.y;
  double u0 = rng_.uniform(-1.0, 1.0);
  double u1 = rng_.uniform(-1.0, 1.0);
  if (draws_.dispersion) {
    u0 = (*draws_.dispersion)[0];
    u1 = (*draws_.dispersion)[1];
  }
  frame.d0 = u0 / kScale;
  frame.d1 = u1 / kScale;

  // Steps 4-5: main engine, then side engine, as impulses at the lander's origin plus the offsets.
  const auto apply = [this](const LanderImpulse& j) {
    lander_->ApplyLinearImpulse(b2Vec2(static_cast<float>(j.jx), static_cast<float>(j.jy)),
                                b2Vec2(static_cast<float>(j.px), static_cast<float>(j.py)), true);
  };
  if (main_power > 0.0) apply(lander_main_impulse(frame, main_power));
  if (side_power > 0.0) apply(lander_side_impulse(frame, side_direction, side_power));

  // Step 6.
  if (config_.emulate_box2d23_limits)
    for (b2RevoluteJoint* joint : joints_) apply_box2d23_limit_rule(joint);
  world_->Step(static_cast<float>(1.0 / kFps), kVelocityIterations, kPositionIterations);

  // Observation: the body origin (not the centre of mass), the centre-of-mass velocity, the unwrapped angle.
  const b2Vec2 pos = lander_->GetPosition();
  const b2Vec2 vel = lander_->GetLinearVelocity();
  auto& s = state_;
  s[0] = (pos.x - kW / 2) / (kW / 2);
  s[1] = (pos.y - (kHelipadY + kLegDown / kScale)) / (kH / 2);
  s[2] = vel.x * (kW / 2) / kFps;
  s[3] = vel.y * (kH / 2) / kFps;
  s[4] = lander_->GetAngle();
  s[5] = 20.0 * lander_->GetAngularVelocity() / kFps;
  s[6] = contacts_->leg_contact(0) ? 1.0 : 0.0;
  s[7] = contacts_->leg_contact(1) ? 1.0 : 0.0;
  for (size_t i = 0; i < 8; ++i) obs[i] = static_cast<float>(s[i]);

  // Reward: the shaping difference (0 on the reset step, which has no previous value), less fuel.
  const double shaping = -100 * std::sqrt(s[0] * s[0] + s[1] * s[1]) - 100 * std::sqrt(s[2] * s[2] + s[3] * s[3]) -
                         100 * std::abs(s[4]) + 10 * s[6] + 10 * s[7];
  double reward = prev_shaping_ ? shaping - *prev_shaping_ : 0.0;
  prev_shaping_ = shaping;
  reward -= main_power * kFuelMain;
  reward -= side_power * kFuelSide;
  return reward;
}

void LunarLander::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  build_world();
  // As in Gymnasium, reset() runs one physics step with the null action and returns its observation; its reward and any
  // termination are discarded, and it is not an agent step.
  simulate(0.0, 0.0, 0.0, obs);
  t_ = 0;
  end_ = LanderEnd::none;
  running_ = true;
}

StepResult LunarLander::step(std::span<const float> action, std::span<float> obs) {
  double main_power = 0.0, side_direction = 0.0, side_power = 0.0;
  if (config_.continuous) {
    if (action.size() != 2 || !std::isfinite(action[0]) || !std::isfinite(action[1])) [[unlikely]]
      throw_invalid_action(id_, action, action_space_);
    // np.clip(action, -1, +1).astype(np.float64); a0 ≤ 0 leaves the main engine off, |a1| ≤ 0.5 the side engines.
    const double a0 = std::clamp(static_cast<double>(action[0]), -1.0, 1.0);
    const double a1 = std::clamp(static_cast<double>(action[1]), -1.0, 1.0);
    if (a0 > 0.0) main_power = (std::clamp(a0, 0.0, 1.0) + 1.0) * 0.5;  // 0.5..1
    if (std::abs(a1) > 0.5) {
      side_direction = a1 > 0 ? 1.0 : -1.0;
      side_power = std::clamp(std::abs(a1), 0.5, 1.0);
    }
  } else {
    // 0 noop, 1 left engine (pushes towards −x), 2 main engine, 3 right engine.
    const int64_t a = discrete_action(action, action_space_, id_);
    if (a == 2) main_power = 1.0;
    if (a == 1 || a == 3) {
      side_direction = static_cast<double>(a - 2);
      side_power = 1.0;
    }
  }
  if (!running_) [[unlikely]]
    throw_env_misuse(id_, "step() called after the episode ended (or before the first reset())");

  double reward = simulate(main_power, side_direction, side_power, obs);
  ++t_;
  StepResult r;
  // Termination: each terminal rule replaces the step's reward; the second wins when both hold.
  if (contacts_->body_touched() || std::abs(state_[0]) >= 1.0) {
    r.terminated = true;
    reward = -kTerminalReward;
    end_ = contacts_->body_touched() ? LanderEnd::crashed : LanderEnd::out_of_bounds;
  }
  if (!lander_->IsAwake()) {
    r.terminated = true;
    reward = kTerminalReward;
    end_ = LanderEnd::landed;
  }
  r.success = end_ == LanderEnd::landed;
  r.truncated = t_ >= config_.max_episode_steps;  // also on a terminating step, as Gymnasium's TimeLimit does
  r.reward = static_cast<float>(reward);
  running_ = !(r.terminated || r.truncated);
  return r;
}

std::vector<std::array<float, 4>> LunarLander::moon_edges() const {
  if (moon_ == nullptr) throw_env_misuse(id_, "moon_edges() called before the first reset()");
  std::vector<std::array<float, 4>> edges;
  for (const b2Fixture* f = moon_->GetFixtureList(); f != nullptr; f = f->GetNext()) {
    const auto* e = static_cast<const b2EdgeShape*>(f->GetShape());
    edges.push_back({e->m_vertex1.x, e->m_vertex1.y, e->m_vertex2.x, e->m_vertex2.y});
  }
  std::reverse(edges.begin(), edges.end());  // Box2D prepends fixtures; return them in creation order
  return edges;
}

std::vector<LanderFixtureInfo> LunarLander::fixtures() const {
  if (moon_ == nullptr) throw_env_misuse(id_, "fixtures() called before the first reset()");
  std::vector<LanderFixtureInfo> out;
  for (const b2Body* body : {moon_, lander_, legs_[0], legs_[1]}) {
    const size_t first = out.size();
    for (const b2Fixture* f = body->GetFixtureList(); f != nullptr; f = f->GetNext())
      out.push_back({f->GetFriction(), f->GetRestitution(), f->GetDensity(), f->GetFilterData().categoryBits,
                     f->GetFilterData().maskBits});
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());  // creation order
  }
  return out;
}

LanderJointInfo LunarLander::leg_joint(int leg) const {
  if (joints_[0] == nullptr) throw_env_misuse(id_, "leg_joint() called before the first reset()");
  const b2RevoluteJoint* j = joints_.at(static_cast<size_t>(leg));
  return {j->GetReferenceAngle(),
          j->GetLowerLimit(),
          j->GetUpperLimit(),
          j->GetMaxMotorTorque(),
          j->GetMotorSpeed(),
          {j->GetLocalAnchorA().x, j->GetLocalAnchorA().y},
          {j->GetLocalAnchorB().x, j->GetLocalAnchorB().y},
          j->IsMotorEnabled(),
          j->IsLimitEnabled()};
}

double LunarLander::leg_angle(int leg) const {
  if (legs_[0] == nullptr) throw_env_misuse(id_, "leg_angle() called before the first reset()");
  return static_cast<double>(legs_.at(static_cast<size_t>(leg))->GetAngle()) - lander_->GetAngle();
}

double LunarLander::lander_mass() const {
  if (lander_ == nullptr) throw_env_misuse(id_, "lander_mass() called before the first reset()");
  return lander_->GetMass();
}

double LunarLander::leg_mass(int leg) const {
  if (legs_[0] == nullptr) throw_env_misuse(id_, "leg_mass() called before the first reset()");
  return legs_.at(static_cast<size_t>(leg))->GetMass();
}

bool LunarLander::lander_awake() const {
  if (lander_ == nullptr) throw_env_misuse(id_, "lander_awake() called before the first reset()");
  return lander_->IsAwake();
}

bool LunarLander::leg_contact(int leg) const { return contacts_->leg_contact(static_cast<size_t>(leg)); }

}  // namespace rlm::envs::box2d
