#include "envs/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <functional>

#include "core/config_suggest.hpp"  // edit_distance, shared with the config did-you-mean
#include "core/error.hpp"
#include "envs/box2d/bipedal_walker.hpp"
#include "envs/box2d/lunar_lander.hpp"
#include "envs/box2d/observation_masks.hpp"
#include "envs/box2d/partial_observation.hpp"
#include "envs/kf/best_arm.hpp"
#include "envs/memory_rl/key_to_door.hpp"
#include "envs/memory_rl/tmaze.hpp"
#include "envs/memory_rl/visual_match.hpp"
#include "envs/meta/point_robot.hpp"
#include "envs/meta/wind.hpp"
#include "envs/popgym/autoencode.hpp"
#include "envs/popgym/battleship.hpp"
#include "envs/popgym/concentration.hpp"
#include "envs/popgym/count_recall.hpp"
#include "envs/popgym/higher_lower.hpp"
#include "envs/popgym/labyrinth_escape.hpp"
#include "envs/popgym/labyrinth_explore.hpp"
#include "envs/popgym/mine_sweeper.hpp"
#include "envs/popgym/multiarmed_bandit.hpp"
#include "envs/popgym/noisy_position_only_cartpole.hpp"
#include "envs/popgym/noisy_position_only_pendulum.hpp"
#include "envs/popgym/position_only_cartpole.hpp"
#include "envs/popgym/position_only_pendulum.hpp"
#include "envs/popgym/repeat_first.hpp"
#include "envs/popgym/repeat_previous.hpp"
#include "envs/popgym/velocity_only_cartpole.hpp"
// <<< new env headers above this line >>>
#include "envs/wrappers.hpp"

namespace rlm::envs {
namespace {

/// One family: its id prefix, a factory per level (popgym's Easy/Medium/Hard presets; a family whose parameters
/// come from env.options has the single level "") and the env.options keys each level reads.
struct FamilyRow {
  std::string suite;                ///< "popgym"
  std::string family;               ///< "RepeatFirst"
  std::vector<std::string> levels;  ///< id suffixes: {"Easy", "Medium", "Hard"} or {""}
  std::function<std::unique_ptr<Env>(std::string id, size_t level, const EnvOptions& options)> make;
  /// Per level: the keys of the option groups its factory reads, in their visit() order.
  std::vector<std::vector<std::string>> option_keys;
};

/// Lists the keys that option groups declare in visit() (the groups hold fields only, no sections).
struct KeyLister {
  std::vector<std::string> keys;
  template <class T, class... Check>
  void field(std::string_view name, const T&, const Check&...) {
    keys.emplace_back(name);
  }
};

template <class... Groups>
std::vector<std::string> keys_of() {
  KeyLister lister;
  (Groups{}.visit(lister), ...);
  return lister.keys;
}

/// `a` followed by `b`.
std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Builds a row from an env type and its three presets, so each family reads as one line in the table below.
template <class E, class Config>
FamilyRow family(std::string suite, std::string name, std::array<Config, 3> presets) {
  return {std::move(suite),
          std::move(name),
          {"Easy", "Medium", "Hard"},
          [presets](std::string id, size_t level, const EnvOptions&) -> std::unique_ptr<Env> {
            return std::make_unique<E>(std::move(id), presets[level]);
          },
          {{}, {}, {}}};
}

/// A row with one id whose env is built from the option groups it names: `config_of` sees those groups only, and
/// their keys are the ones the id reads.
template <class E, class... Groups>
FamilyRow parameterised(std::string suite, std::string name,
                        std::type_identity_t<std::function<typename E::Config(const Groups&...)>> config_of) {
  return {std::move(suite),
          std::move(name),
          {""},
          [config_of](std::string id, size_t, const EnvOptions& options) -> std::unique_ptr<Env> {
            return std::make_unique<E>(std::move(id), config_of(static_cast<const Groups&>(options)...));
          },
          {keys_of<Groups...>()}};
}

/// A Box2D task as three ids, <name> (Gymnasium's full observation), <name>-P and <name>-V (the masks of
/// docs/envs/box2d.md), each wrapped in PartialObservation when it masks or adds noise. Every level reads the
/// observation noise, a task with continuous actions the action noise, a level its `mask_keys` and then the groups
/// `config_of` sees.
template <class E, class... Groups>
FamilyRow box2d_family(
    std::string name, bool continuous_actions,
    std::type_identity_t<std::function<typename E::Config(const Groups&...)>> config_of,
    const std::function<box2d::ObservationMask(std::string_view variant, const EnvOptions&)>& mask_of,
    const std::array<std::vector<std::string>, 3>& mask_keys = {}) {
  const auto noise = continuous_actions ? keys_of<box2d::ObservationNoiseOptions, box2d::ActionNoiseOptions>()
                                        : keys_of<box2d::ObservationNoiseOptions>();
  const auto groups = keys_of<Groups...>();
  std::vector<std::vector<std::string>> option_keys;
  for (const auto& level_keys : mask_keys) option_keys.push_back(concat(concat(noise, level_keys), groups));
  return {"box2d",
          std::move(name),
          {"", "-P", "-V"},
          [config_of, mask_of](std::string id, size_t level, const EnvOptions& options) -> std::unique_ptr<Env> {
            std::unique_ptr<Env> env =
                std::make_unique<E>(std::move(id), config_of(static_cast<const Groups&>(options)...));
            if (level == 0 && options.obs_noise_sigma == 0 && options.action_noise_sigma == 0) return env;
            const box2d::ObservationMask mask = mask_of(level == 0 ? "F" : level == 1 ? "P" : "V", options);
            return std::make_unique<box2d::PartialObservation>(
                std::move(env), box2d::PartialObservationConfig{.kept = mask.kept,
                                                                .binary = mask.binary,
                                                                .obs_noise_sigma = options.obs_noise_sigma,
                                                                .noise_on_binary = options.noise_on_binary,
                                                                .action_noise_sigma = options.action_noise_sigma});
          },
          std::move(option_keys)};
}

box2d::LunarLanderConfig lunar_lander_config(const box2d::LunarLanderOptions& o, const box2d::Box2d23LimitsOptions& l,
                                             bool continuous) {
  return {.continuous = continuous,
          .gravity = o.gravity,
          .enable_wind = o.enable_wind,
          .wind_power = o.wind_power,
          .turbulence_power = o.turbulence_power,
          .emulate_box2d23_limits = l.box2d23_limits};
}

box2d::ObservationMask lander_mask(std::string_view variant, const EnvOptions&) {
  return box2d::lunar_lander_mask(variant);
}

box2d::ObservationMask walker_mask(std::string_view variant, const EnvOptions& o) {
  return box2d::bipedal_walker_mask(variant, o.contacts_in_v, o.lidar_in_p);
}

/// What walker_mask reads at each level: nothing for the full observation, lidar_in_p for -P, contacts_in_v for -V.
std::array<std::vector<std::string>, 3> walker_mask_keys() {
  return {{{}, keys_of<box2d::LidarInPOptions>(), keys_of<box2d::ContactsInVOptions>()}};
}

/// The registry. Presets are the difficulty classes at the bottom of each popgym env file
/// (proroklab/popgym@410d5aa:popgym/envs/<env>.py).
const std::vector<FamilyRow>& table() {
  using namespace popgym;  // in a .cpp, for the table's readability only
  static const std::vector<FamilyRow> rows = {
      family<RepeatFirst, RepeatFirstConfig>("popgym", "RepeatFirst",
                                             {{{.num_decks = 1}, {.num_decks = 8}, {.num_decks = 16}}}),
      family<RepeatPrevious, RepeatPreviousConfig>(
          "popgym", "RepeatPrevious",
          {{{.num_decks = 1, .k = 4}, {.num_decks = 2, .k = 32}, {.num_decks = 3, .k = 64}}}),
      family<PositionOnlyCartPole, PositionOnlyCartPoleConfig>(
          "popgym", "PositionOnlyCartPole",
          {{{.max_episode_length = 200}, {.max_episode_length = 400}, {.max_episode_length = 600}}}),
      family<Battleship, BattleshipConfig>("popgym", "Battleship",
                                           {{{.board_size = 8}, {.board_size = 10}, {.board_size = 12}}}),
      family<MineSweeper, MineSweeperConfig>("popgym", "MineSweeper",
                                             {{{.rows = 4, .cols = 4, .num_mines = 2},
                                               {.rows = 6, .cols = 6, .num_mines = 6},
                                               {.rows = 8, .cols = 8, .num_mines = 10}}}),
      family<MultiarmedBandit, MultiarmedBanditConfig>("popgym", "MultiarmedBandit",
                                                       {{{.num_bandits = 10, .episode_length = 200},
                                                         {.num_bandits = 20, .episode_length = 400},
                                                         {.num_bandits = 30, .episode_length = 600}}}),
      family<LabyrinthEscape, LabyrinthEscapeConfig>(
          "popgym", "LabyrinthEscape", {{{.maze_dims = {10, 10}}, {.maze_dims = {14, 14}}, {.maze_dims = {18, 18}}}}),
      family<LabyrinthExplore, LabyrinthExploreConfig>(
          "popgym", "LabyrinthExplore", {{{.maze_dims = {10, 10}}, {.maze_dims = {14, 14}}, {.maze_dims = {18, 18}}}}),
      family<Autoencode, AutoencodeConfig>("popgym", "Autoencode",
                                           {{{.num_decks = 1}, {.num_decks = 2}, {.num_decks = 3}}}),
      family<CountRecall, CountRecallConfig>("popgym", "CountRecall",
                                             {{{.num_decks = 1, .deck_type = CardCategory::Colors},
                                               {.num_decks = 2, .deck_type = CardCategory::Suits},
                                               {.num_decks = 4, .deck_type = CardCategory::Ranks}}}),
      family<HigherLower, HigherLowerConfig>("popgym", "HigherLower",
                                             {{{.num_decks = 1}, {.num_decks = 2}, {.num_decks = 3}}}),
      family<Concentration, ConcentrationConfig>("popgym", "Concentration",
                                                 {{{.num_decks = 1, .deck_type = CardCategory::Colors},
                                                   {.num_decks = 2, .deck_type = CardCategory::Colors},
                                                   {.num_decks = 1, .deck_type = CardCategory::Ranks}}}),
      family<VelocityOnlyCartPole, VelocityOnlyCartPoleConfig>(  // upstream spells the id "Cartpole"
          "popgym", "VelocityOnlyCartpole",
          {{{.max_episode_length = 200}, {.max_episode_length = 400}, {.max_episode_length = 600}}}),
      family<NoisyPositionOnlyCartPole, NoisyPositionOnlyCartPoleConfig>(
          "popgym", "NoisyPositionOnlyCartPole", {{{.noise_sigma = 0.1}, {.noise_sigma = 0.2}, {.noise_sigma = 0.3}}}),
      family<PositionOnlyPendulum, PositionOnlyPendulumConfig>(
          "popgym", "PositionOnlyPendulum",
          {{{.max_episode_length = 200}, {.max_episode_length = 150}, {.max_episode_length = 100}}}),
      family<NoisyPositionOnlyPendulum, NoisyPositionOnlyPendulumConfig>(
          "popgym", "NoisyPositionOnlyPendulum", {{{.noise_sigma = 0.1}, {.noise_sigma = 0.2}, {.noise_sigma = 0.3}}}),
      parameterised<memory_rl::TMaze, memory_rl::TMazeOptions>("memory_rl", "TMazePassive",
                                                               [](const memory_rl::TMazeOptions& o) {
                                                                 return memory_rl::TMazeConfig{
                                                                     .corridor_length = o.corridor_length,
                                                                     .oracle_length = 0,
                                                                     .distract_reward = o.distract_reward};
                                                               }),
      parameterised<memory_rl::TMaze, memory_rl::TMazeOptions>("memory_rl", "TMazeActive",
                                                               [](const memory_rl::TMazeOptions& o) {
                                                                 return memory_rl::TMazeConfig{
                                                                     .corridor_length = o.corridor_length,
                                                                     .oracle_length = 1,
                                                                     .distract_reward = o.distract_reward};
                                                               }),
      parameterised<kf::BestArm, kf::BestArmOptions>("kf", "BestArm",
                                                     [](const kf::BestArmOptions& o) {
                                                       return kf::BestArmConfig{.request_cost = o.request_cost,
                                                                                .sigma_low = o.sigma_low,
                                                                                .sigma_high = o.sigma_high};
                                                     }),
      parameterised<meta::Wind, ReferenceVariantOptions, meta::TaskSplitOptions>("meta", "Wind",
                                                                                 [](const ReferenceVariantOptions& v,
                                                                                    const meta::TaskSplitOptions& t) {
                                                                                   return meta::WindConfig{
                                                                                       .variant = v.variant,
                                                                                       .train_tasks = t.train_tasks,
                                                                                       .task_split = t.task_split};
                                                                                 }),
      parameterised<meta::PointRobot, ReferenceVariantOptions,
                    meta::TaskSplitOptions>("meta", "PointRobot",
                                            [](const ReferenceVariantOptions& v, const meta::TaskSplitOptions& t) {
                                              return meta::PointRobotConfig{.variant = v.variant,
                                                                            .train_tasks = t.train_tasks,
                                                                            .task_split = t.task_split};
                                            }),
      parameterised<memory_rl::VisualMatch, ReferenceVariantOptions, memory_rl::DistractorOptions>(
          "memory_rl", "PassiveVisualMatch",
          [](const ReferenceVariantOptions& v, const memory_rl::DistractorOptions& d) {
            return memory_rl::VisualMatchConfig{
                .passive = true, .variant = v.variant, .distractor_length = d.distractor_length};
          }),
      parameterised<memory_rl::VisualMatch, ReferenceVariantOptions, memory_rl::DistractorOptions>(
          "memory_rl", "ActiveVisualMatch",
          [](const ReferenceVariantOptions& v, const memory_rl::DistractorOptions& d) {
            return memory_rl::VisualMatchConfig{
                .passive = false, .variant = v.variant, .distractor_length = d.distractor_length};
          }),
      parameterised<memory_rl::KeyToDoor, ReferenceVariantOptions,
                    memory_rl::DistractorOptions>("memory_rl", "KeyToDoor",
                                                  [](const ReferenceVariantOptions& v,
                                                     const memory_rl::DistractorOptions& d) {
                                                    return memory_rl::KeyToDoorConfig{
                                                        .variant = v.variant, .distractor_length = d.distractor_length};
                                                  }),
      box2d_family<box2d::LunarLander, box2d::LunarLanderOptions, box2d::Box2d23LimitsOptions>(
          "LunarLander", false,
          [](const box2d::LunarLanderOptions& o,
             const box2d::Box2d23LimitsOptions& l) { return lunar_lander_config(o, l, false); },
          lander_mask),
      box2d_family<box2d::LunarLander, box2d::LunarLanderOptions, box2d::Box2d23LimitsOptions>(
          "LunarLanderContinuous", true,
          [](const box2d::LunarLanderOptions& o,
             const box2d::Box2d23LimitsOptions& l) { return lunar_lander_config(o, l, true); },
          lander_mask),
      box2d_family<box2d::BipedalWalker, box2d::Box2d23LimitsOptions>(
          "BipedalWalker", true,
          [](const box2d::Box2d23LimitsOptions&
                 l) { return box2d::BipedalWalkerConfig{.hardcore = false, .emulate_box2d23_limits = l.box2d23_limits}; },
          walker_mask, walker_mask_keys()),
      box2d_family<box2d::BipedalWalker, box2d::Box2d23LimitsOptions>(
          "BipedalWalkerHardcore", true,
          [](const box2d::Box2d23LimitsOptions&
                 l) { return box2d::BipedalWalkerConfig{.hardcore = true, .emulate_box2d23_limits = l.box2d23_limits}; },
          walker_mask, walker_mask_keys()),
      // <<< new families above this line >>>
  };
  return rows;
}

std::string make_id(const FamilyRow& row, size_t level) { return row.suite + "/" + row.family + row.levels[level]; }

/// gymnasium spelling "suite-Name-v0" -> "suite/Name" ("box2d-LunarLander-P-v0" -> "box2d/LunarLander-P");
/// anything else is returned unchanged.
std::string from_gym_spelling(const std::string& id) {
  const auto dash = id.find('-');
  if (dash == std::string::npos || id.find('/') != std::string::npos || !id.ends_with("-v0")) return id;
  const std::string name = id.substr(dash + 1, id.size() - 3 - (dash + 1));  // may hold dashes: LunarLander-P
  if (name.empty()) return id;
  return id.substr(0, dash) + "/" + name;
}

/// Finds the row and level of a canonical id; false if none.
bool lookup(const std::string& canonical, const FamilyRow*& row, size_t& level) {
  for (const FamilyRow& r : table())
    for (size_t l = 0; l < r.levels.size(); ++l)
      if (make_id(r, l) == canonical) {
        row = &r;
        level = l;
        return true;
      }
  return false;
}

}  // namespace

std::vector<std::string> registered_env_ids() {
  std::vector<std::string> ids;
  for (const FamilyRow& r : table())
    for (size_t l = 0; l < r.levels.size(); ++l) ids.push_back(make_id(r, l));
  return ids;
}

WrapperOptions wrapper_options(const EnvConfig& config) {
  return {.previous_action = config.previous_action,
          .antialias = config.antialias,
          .flatten = true,
          .markovian = config.markovian,
          .discrete_action = config.discrete_action};
}

std::string canonical_env_id(const std::string& id) {
  std::string canonical = from_gym_spelling(id);
  const FamilyRow* row = nullptr;
  size_t level = 0;
  if (lookup(canonical, row, level)) return canonical;

  std::vector<std::string> ids = registered_env_ids();
  std::stable_sort(ids.begin(), ids.end(), [&](const std::string& a, const std::string& b) {
    return config_detail::edit_distance(canonical, a) < config_detail::edit_distance(canonical, b);
  });
  ids.resize(std::min<size_t>(ids.size(), 3));
  throw EnvError(fmt::format("unknown env id '{}' (did you mean {}?)", id, fmt::join(ids, ", ")));
}

namespace {

/// The row and level of `id` in either spelling; an unknown id throws as canonical_env_id does.
struct FoundRow {
  std::string canonical;
  const FamilyRow* row = nullptr;
  size_t level = 0;
};
FoundRow find_row(const std::string& id) {
  FoundRow found{.canonical = canonical_env_id(id)};
  lookup(found.canonical, found.row, found.level);
  return found;
}

}  // namespace

const std::vector<std::string>& env_option_keys(const std::string& id) {
  const FoundRow found = find_row(id);
  return found.row->option_keys[found.level];
}

std::optional<std::string> unread_option_reason(const std::string& id, std::string_view key) {
  const std::vector<std::string>& read = env_option_keys(id);
  if (std::find(read.begin(), read.end(), key) != read.end()) return std::nullopt;
  if (read.empty()) return fmt::format("env.options.{}: env {} takes no env.options", key, id);
  return fmt::format("env.options.{}: env {} reads only env.options.{}", key, id, fmt::join(read, ", env.options."));
}

std::unique_ptr<Env> make_env(const std::string& id, const WrapperOptions& options, const EnvOptions& env_options) {
  const FoundRow found = find_row(id);
  std::unique_ptr<Env> env = found.row->make(found.canonical, found.level, env_options);
  if (options.previous_action) env = std::make_unique<PreviousAction>(std::move(env));
  if (options.antialias) env = std::make_unique<Antialias>(std::move(env));
  if (const Observability level = parse_observability(options.markovian); level != Observability::kPartial)
    env = std::make_unique<Markovian>(std::move(env), level);
  if (options.flatten) env = std::make_unique<Flatten>(std::move(env));
  if (options.discrete_action) env = std::make_unique<DiscreteAction>(std::move(env));
  return env;
}

}  // namespace rlm::envs
