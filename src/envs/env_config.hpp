// Env options (YAML section "env"), owned by the envs layer: wrapper_options(EnvConfig) maps them onto the Env
// decorators. Field syntax: core/config_schema.hpp.
#pragma once
#include <fmt/format.h>

#include <string>

#include "core/config_schema.hpp"
#include "envs/box2d/box2d_options.hpp"
#include "envs/kf/best_arm_options.hpp"
#include "envs/memory_rl/memory_rl_options.hpp"
#include "envs/meta/meta_options.hpp"

namespace rlm {

/// Meta-RL (Wind, Point Robot) and the pycolab tasks (Visual Match, Key-to-Door): whose settings to follow.
struct ReferenceVariantOptions {
  /// Wind (docs/envs/meta.md): shm (SHM's code: 200 tasks, H 100, radius 0.01) or original (pomdp-baselines: 60 tasks,
  /// H 75, radius 0.03). Point Robot: shm (200 tasks, H 100, radius 0.05) or original (100 tasks, H 60, radius 0.2),
  /// both two inner episodes per task. Visual Match / Key-to-Door (docs/envs/memory_rl.md): shm (SHM's
  /// pomdp-baselines settings: VM 15/D/10 steps, final reward 10; KtD 10/D/3, final 10) or original (Memory-RL's
  /// configs: VM 15/D/15, final 5; KtD 15/D/10, final 5).
  std::string variant = "shm";

  template <class V>
  void visit(V& v) {
    v.field("variant", variant, one_of({"shm", "original"}));
  }
  bool operator==(const ReferenceVariantOptions&) const = default;
};

/// The options of the env families that take parameters (YAML section env.options, one flat map). Each family
/// declares its group beside its code; the registry row that builds an env names the groups it reads
/// (envs::env_option_keys), and a key set for an env that does not read it is a config error. The groups are bases,
/// so a field reads as options.corridor_length wherever it is used.
struct EnvOptions : envs::memory_rl::TMazeOptions,
                    envs::kf::BestArmOptions,
                    ReferenceVariantOptions,
                    envs::meta::TaskSplitOptions,
                    envs::memory_rl::DistractorOptions,
                    envs::box2d::ObservationNoiseOptions,
                    envs::box2d::ActionNoiseOptions,
                    envs::box2d::LunarLanderOptions,
                    envs::box2d::LidarInPOptions,
                    envs::box2d::ContactsInVOptions,
                    envs::box2d::Box2d23LimitsOptions {
  /// Every group once, in the order config.yaml lists their keys.
  template <class V>
  void visit(V& v) {
    TMazeOptions::visit(v);
    BestArmOptions::visit(v);
    ReferenceVariantOptions::visit(v);
    TaskSplitOptions::visit(v);
    DistractorOptions::visit(v);
    ObservationNoiseOptions::visit(v);
    ActionNoiseOptions::visit(v);
    LunarLanderOptions::visit(v);
    LidarInPOptions::visit(v);
    ContactsInVOptions::visit(v);
    Box2d23LimitsOptions::visit(v);
  }
  void check(const CheckContext& c) const { BestArmOptions::check(c); }
  bool operator==(const EnvOptions&) const = default;
};

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
  /// Parameters of the env family (envs::env_option_keys(id) lists which ones an id reads).
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
