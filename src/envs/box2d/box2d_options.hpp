// The env.options that the Box2D tasks read (docs/envs/box2d.md; YAML keys flat in env.options, composed in
// envs/env_config.hpp). Each group is read by the ids its registry row names (envs/registry.cpp): the noise by every
// Box2D id, the action noise by the continuous ones, the lander's physics by the landers, a mask option by the walker's
// -P or -V id only.
#pragma once
#include "core/config_schema.hpp"

namespace rlm::envs::box2d {

/// The KF paper's protocol (§5.3 and App. G).
struct ObservationNoiseOptions {
  /// Std of the i.i.d. Gaussian noise added to every kept observation element at reset and at every step (KF: 0.3, or
  /// 0.1 for small-scale observations; 0 = none).
  double obs_noise_sigma = 0.0;
  /// Also noise the 0/1 leg-contact flags (the literal protocol); false keeps them exact.
  bool noise_on_binary = true;

  template <class V>
  void visit(V& v) {
    v.field("obs_noise_sigma", obs_noise_sigma, in_range(0.0, 100.0));
    v.field("noise_on_binary", noise_on_binary);
  }
  bool operator==(const ObservationNoiseOptions&) const = default;
};

/// Tasks with continuous actions (KF paper App. H).
struct ActionNoiseOptions {
  /// Std of the Gaussian noise added to each action before the env clips it (KF: 0.3).
  double action_noise_sigma = 0.0;

  template <class V>
  void visit(V& v) {
    v.field("action_noise_sigma", action_noise_sigma, in_range(0.0, 100.0));
  }
  bool operator==(const ActionNoiseOptions&) const = default;
};

/// LunarLander's physics options (Gymnasium's LunarLander-v3 arguments).
struct LunarLanderOptions {
  /// Gravity in m/s², in (−12, 0) as Gymnasium asserts.
  double gravity = -10.0;
  /// Wind force and turbulence torque while no leg touches the ground (a hidden-state POMDP: the wind's phase is never
  /// observed), with their magnitudes (Gymnasium's defaults 15 and 1.5).
  bool enable_wind = false;
  double wind_power = 15.0;
  double turbulence_power = 1.5;

  template <class V>
  void visit(V& v) {
    v.field("gravity", gravity, Range{-12.0, 0.0, true, true});
    v.field("enable_wind", enable_wind);
    v.field("wind_power", wind_power, in_range(0.0, 1000.0));
    v.field("turbulence_power", turbulence_power, in_range(0.0, 1000.0));
  }
  bool operator==(const LunarLanderOptions&) const = default;
};

/// BipedalWalker-P only.
struct LidarInPOptions {
  /// Keep the 10 lidar ranges (they measure geometry, so they count as positions).
  bool lidar_in_p = true;

  template <class V>
  void visit(V& v) {
    v.field("lidar_in_p", lidar_in_p);
  }
  bool operator==(const LidarInPOptions&) const = default;
};

/// BipedalWalker-V only.
struct ContactsInVOptions {
  /// Also keep the two foot contacts (the LunarLander convention; the PyBullet one leaves them out).
  bool contacts_in_v = false;

  template <class V>
  void visit(V& v) {
    v.field("contacts_in_v", contacts_in_v);
  }
  bool operator==(const ContactsInVOptions&) const = default;
};

/// Every Box2D task.
struct Box2d23LimitsOptions {
  /// Box2D 2.3's joint-limit rule, as Gymnasium's pybox2d runs it: a limit acts only on steps that start with the
  /// joint at or past it (envs/box2d/box2d23_limits.hpp). false: 2.4.1's own limits, which hold the walker's knees at
  /// their limit and let a walker stand still for a whole episode, as Gymnasium's cannot.
  bool box2d23_limits = true;

  template <class V>
  void visit(V& v) {
    v.field("box2d23_limits", box2d23_limits);
  }
  bool operator==(const Box2d23LimitsOptions&) const = default;
};

}  // namespace rlm::envs::box2d
