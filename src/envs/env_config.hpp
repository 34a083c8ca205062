// Env options (YAML section "env"), owned by the envs layer: wrapper_options(EnvConfig) maps them onto the Env
// decorators. Field syntax: core/config_schema.hpp.
#pragma once
#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/config_schema.hpp"

namespace rlm {

/// Options of the env families that take parameters (YAML section env.options). Each family reads the fields that
/// env_options_read_by(id) lists; a field set for an env that does not read it is a config error.
struct EnvOptions {
  /// T-maze (Memory-RL envs/tmaze.py): corridor length Lc; the episode is Lc + 1 steps (passive) or Lc + 3 (active),
  /// the per-step penalty −1/Lc as Memory-RL's configs set it (paper lengths: passive 50…1500, active 20…500).
  int corridor_length = 10;
  /// T-maze: reward for standing on the oracle cell x = 0 (Memory-RL's distract_reward; 0 in the paper).
  double distract_reward = 0.0;
  /// Best-Arm (KF paper §5.2): cost ρ of requesting a sample (reward −ρ; the paper's heatmap uses 0).
  double request_cost = 0.0;
  /// Best-Arm: the arm's noise σ ~ U(sigma_low, sigma_high) per episode; training U(0, 2), out of distribution U(2, 3).
  double sigma_low = 0.0;
  double sigma_high = 2.0;
  /// Wind (meta-RL, docs/envs/meta.md): shm (SHM's code: 200 tasks, H 100, radius 0.01) or original (pomdp-baselines:
  /// 60 tasks, H 75, radius 0.03). Point Robot: shm (200 tasks, H 100, radius 0.05) or original (100 tasks, H 60,
  /// radius 0.2), both two inner episodes per task. Visual Match / Key-to-Door (docs/envs/memory_rl.md): shm (SHM's
  /// pomdp-baselines settings: VM 15/D/10 steps, final reward 10; KtD 10/D/3, final 10) or original (Memory-RL's
  /// configs: VM 15/D/15, final 5; KtD 15/D/10, final 5).
  std::string variant = "shm";
  /// Wind, Point Robot: training tasks of the fixed split (SHM: 50 or 10 of 200; original Wind 40 of 60, Point Robot
  /// 80 of 100); 0 = the variant's default.
  int train_tasks = 0;
  /// Wind, Point Robot: which tasks episodes draw from, train or eval (the off-policy trainer's evaluation envs use
  /// eval).
  std::string task_split = "train";
  /// Visual Match, Key-to-Door: frames D of the apple-collecting distractor phase (papers: 60…1000); 0 = the
  /// variant's default (shm 100, original 60).
  int distractor_length = 0;
  /// Box2D tasks (the KF paper's protocol, §5.3 and App. G): std of the i.i.d. Gaussian noise added to every kept
  /// observation element at reset and at every step (KF: 0.3, or 0.1 for small-scale observations; 0 = none).
  double obs_noise_sigma = 0.0;
  /// Box2D tasks: also noise the 0/1 leg-contact flags (the literal protocol); false keeps them exact.
  bool noise_on_binary = true;
  /// Box2D tasks with continuous actions: std of the Gaussian noise added to each action before the env clips it
  /// (KF paper App. H: 0.3).
  double action_noise_sigma = 0.0;
  /// LunarLander: gravity in m/s², in (−12, 0) as Gymnasium asserts.
  double gravity = -10.0;
  /// LunarLander: wind force and turbulence torque while no leg touches the ground (a hidden-state POMDP: the wind's
  /// phase is never observed), with their magnitudes (Gymnasium's defaults 15 and 1.5).
  bool enable_wind = false;
  double wind_power = 15.0;
  double turbulence_power = 1.5;
  /// BipedalWalker-P: keep the 10 lidar ranges (they measure geometry, so they count as positions).
  bool lidar_in_p = true;
  /// BipedalWalker-V: also keep the two foot contacts (the LunarLander convention; the PyBullet one leaves them out).
  bool contacts_in_v = false;
  /// Box2D tasks: Box2D 2.3's joint-limit rule, as Gymnasium's pybox2d runs it: a limit acts only on steps that
  /// start with the joint at or past it (envs/box2d/box2d23_limits.hpp). false: 2.4.1's own limits, which hold the
  /// walker's knees at their limit and let a walker stand still for a whole episode, as Gymnasium's cannot.
  bool box2d23_limits = true;

  template <class V>
  void visit(V& v) {
    v.field("corridor_length", corridor_length, in_range(1, 1000000));
    v.field("distract_reward", distract_reward, any_number());
    v.field("request_cost", request_cost, at_least(0));
    v.field("sigma_low", sigma_low, at_least(0));
    v.field("sigma_high", sigma_high, at_least(0));
    v.field("variant", variant, one_of({"shm", "original"}));
    v.field("train_tasks", train_tasks, in_range(0, 199));
    v.field("task_split", task_split, one_of({"train", "eval"}));
    v.field("distractor_length", distractor_length, in_range(0, 100000));
    v.field("obs_noise_sigma", obs_noise_sigma, in_range(0.0, 100.0));
    v.field("noise_on_binary", noise_on_binary);
    v.field("action_noise_sigma", action_noise_sigma, in_range(0.0, 100.0));
    v.field("gravity", gravity, Range{-12.0, 0.0, true, true});
    v.field("enable_wind", enable_wind);
    v.field("wind_power", wind_power, in_range(0.0, 1000.0));
    v.field("turbulence_power", turbulence_power, in_range(0.0, 1000.0));
    v.field("lidar_in_p", lidar_in_p);
    v.field("contacts_in_v", contacts_in_v);
    v.field("box2d23_limits", box2d23_limits);
  }
  void check(const CheckContext& c) const {
    if (sigma_low > sigma_high) {
      c.report({c.key("sigma_low"), c.key("sigma_high")},
               fmt::format("{} = {} exceeds {} = {}", c.key("sigma_low"), sigma_low, c.key("sigma_high"), sigma_high));
    }
  }
  bool operator==(const EnvOptions&) const = default;
};

/// The env.options fields an env id reads (its family's parameters); none for POPGym, whose levels are in the id.
inline std::vector<std::string_view> env_options_read_by(std::string_view id) {
  if (id.starts_with("memory_rl/TMaze") || id.starts_with("memory_rl-TMaze"))
    return {"corridor_length", "distract_reward"};
  if (id == "kf/BestArm" || id == "kf-BestArm-v0") return {"request_cost", "sigma_low", "sigma_high"};
  if (id == "meta/Wind" || id == "meta-Wind-v0") return {"variant", "train_tasks", "task_split"};
  if (id == "meta/PointRobot" || id == "meta-PointRobot-v0") return {"variant", "train_tasks", "task_split"};
  if (id.starts_with("memory_rl/PassiveVisualMatch") || id.starts_with("memory_rl-PassiveVisualMatch") ||
      id.starts_with("memory_rl/ActiveVisualMatch") || id.starts_with("memory_rl-ActiveVisualMatch") ||
      id.starts_with("memory_rl/KeyToDoor") || id.starts_with("memory_rl-KeyToDoor"))
    return {"variant", "distractor_length"};
  // Box2D (docs/envs/box2d.md): box2d/<Base>[-P|-V]; the mask is in the id, noise and physics options in env.options.
  const auto box2d = [&](std::string_view base) {
    return id.starts_with(std::string("box2d/") + std::string(base)) ||
           id.starts_with(std::string("box2d-") + std::string(base));
  };
  if (box2d("LunarLanderContinuous"))
    return {"obs_noise_sigma", "noise_on_binary", "action_noise_sigma", "gravity",
            "enable_wind",     "wind_power",      "turbulence_power",   "box2d23_limits"};
  if (box2d("LunarLander"))
    return {"obs_noise_sigma", "noise_on_binary",  "gravity",       "enable_wind",
            "wind_power",      "turbulence_power", "box2d23_limits"};
  if (box2d("BipedalWalker")) {
    if (id.ends_with("-P") || id.ends_with("-P-v0"))
      return {"obs_noise_sigma", "noise_on_binary", "action_noise_sigma", "lidar_in_p", "box2d23_limits"};
    if (id.ends_with("-V") || id.ends_with("-V-v0"))
      return {"obs_noise_sigma", "noise_on_binary", "action_noise_sigma", "contacts_in_v", "box2d23_limits"};
    return {"obs_noise_sigma", "noise_on_binary", "action_noise_sigma", "box2d23_limits"};
  }
  return {};
}

struct EnvConfig {
  /// Registered environment id.
  std::string id = "popgym/RepeatFirstEasy";
  /// Parallel environments (paper: 4 workers x 16 envs); at most 65536.
  int num_envs = 64;
  /// Threads stepping the environments.
  int num_threads = 1;
  /// Append the previous action (one-hot) to each observation, as POPGym does.
  bool previous_action = true;
  /// Append an is-first-step flag, so the null previous action at t=0 is not read as an action (popgym Antialias).
  bool antialias = true;
  /// popgym Markovian wrapper (debugging): partial = the POMDP obs; full = the env's full state as obs;
  /// full_and_partial = both.
  std::string markovian = "partial";
  /// Turn a MultiDiscrete action into one Discrete action over all combinations (popgym DiscreteAction).
  bool discrete_action = false;
  /// Parameters of the env family (env_options_read_by lists which ones an id reads).
  EnvOptions options;

  template <class V>
  void visit(V& v) {
    v.field("id", id, non_empty());
    v.field("num_envs", num_envs, in_range(1, 65536));
    v.field("num_threads", num_threads, in_range(1, 1024));
    v.field("previous_action", previous_action);
    v.field("antialias", antialias);
    v.field("markovian", markovian, one_of({"partial", "full", "full_and_partial"}));
    v.field("discrete_action", discrete_action);
    v.section("options", options);
  }
  void check(const CheckContext& c) const {
    if (num_threads > num_envs) {
      c.report(
          {c.key("num_threads"), c.key("num_envs")},
          fmt::format("{} = {} is more than {} = {}", c.key("num_threads"), num_threads, c.key("num_envs"), num_envs));
    }
  }
  bool operator==(const EnvConfig&) const = default;
};

}  // namespace rlm
