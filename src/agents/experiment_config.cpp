// Reading, checking and writing the experiment config: the generic engine (core/config_reader.hpp) instantiated
// for Config, plus the checks that involve more than one field or the chosen trainer.
#include "agents/experiment_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config_reader.hpp"
#include "core/error.hpp"
#include "envs/registry.hpp"

namespace rlm {
namespace {

using config_reader::fail;

/// Checks that involve more than one field: each section's own check() (config_reader::check_sections), then those
/// that span sections.
void check_cross_fields(const Config& c, const Report& report) {
  config_reader::check_sections(c, report);
  const int64_t rollout = static_cast<int64_t>(c.env.num_envs) * c.algo.ppo.steps_per_env;
  if (c.algo.type == "ppo" && c.algo.ppo.minibatch_size > rollout) {
    report({"algo.ppo.minibatch_size", "env.num_envs", "algo.ppo.steps_per_env"},
           fmt::format("algo.ppo.minibatch_size = {} is larger than one rollout, env.num_envs * "
                       "algo.ppo.steps_per_env = {} * {} = {}",
                       c.algo.ppo.minibatch_size, c.env.num_envs, c.algo.ppo.steps_per_env, rollout));
  }
}

/// The first key in `origins` (a key the file or command line set to a non-default value) that the chosen trainer
/// or env does not read, with the reason; nullopt when every set key is read. Setting an option that is silently
/// ignored would spend a run on something other than what the config says.
std::optional<std::pair<std::string, std::string>> unread_key(const Config& c, const ConfigOrigins& origins) {
  // A key set to its default changes nothing (a run folder's config.yaml writes every key).
  // A named default Config, not a temporary: GCC 12 warns (-Wmaybe-uninitialized) on destroying a temporary Config.
  static const Config default_config;
  static const std::map<std::string, std::string> defaults = config_values(default_config);
  const std::map<std::string, std::string> values = config_values(c);
  const auto& schemas = trainer_schemas();
  const auto chosen =
      std::find_if(schemas.begin(), schemas.end(), [&](const auto& s) { return s.type == c.algo.type; });
  for (const auto& [key, where] : origins) {
    if (const auto it = values.find(key); it != values.end() && defaults.at(key) == it->second) continue;
    if (key.starts_with("env.options.")) {
      std::optional<std::string> reason;
      try {
        reason =
            envs::unread_option_reason(c.env.id, std::string_view(key).substr(std::string_view("env.options.").size()));
      } catch (const EnvError&) {
        continue;  // an unknown env.id: reported with its own location when the env is built
      }
      if (reason) return std::pair{key, *reason};
      continue;
    }
    if (key.starts_with("model.cnn.") && c.model.encoder != "cnn") {
      return std::pair{key, fmt::format("{} shapes the image encoder, which only model.encoder: cnn uses", key)};
    }
    const auto sections = sections_holding(key);
    if (sections.empty() || chosen == schemas.end()) continue;  // a shared key
    const auto reads = [&](const TrainerSchema& schema) {
      return std::ranges::any_of(sections, [&](std::string_view s) { return std::ranges::count(schema.reads, s) > 0; });
    };
    if (!reads(*chosen)) {
      std::vector<std::string_view> readers;
      for (const auto& schema : schemas) {
        if (reads(schema)) readers.push_back(schema.type);
      }
      return std::pair{key, fmt::format("{} is read by algo.type {}; algo.type = {} reads {}", key,
                                        fmt::join(readers, ", "), c.algo.type, fmt::join(chosen->reads, ", "))};
    }
  }
  return std::nullopt;
}

/// Keys that moved, each refused with its new place ("algo.lr is now algo.ppo.lr"): PPO's options and network, once
/// flat in algo and model, and the off-policy per-network memories, once directly in model.
const std::vector<config_reader::KeyMove>& moved_keys() {
  static const std::vector<config_reader::KeyMove> moves = [] {
    std::vector<config_reader::KeyMove> out;
    for (const std::string& key : config_reader::keys_of<PpoConfig>())
      out.push_back({"algo." + key, "algo.ppo." + key});
    for (const std::string& key : config_reader::keys_of<PpoModelConfig>())
      out.push_back({"model." + key, "model.ppo." + key});
    for (const std::string network : {"actor_memory", "critic_memory"})
      out.push_back({"model." + network, "model.off_policy." + network});
    return out;
  }();
  return moves;
}

}  // namespace

std::vector<std::string> config_keys() {
  static const std::vector<std::string> keys = config_reader::keys_of<Config>();
  return keys;
}

std::map<std::string, std::string> config_values(const Config& config) { return config_reader::values_of(config); }

void validate(const Config& config) {
  check_cross_fields(config,
                     [](std::initializer_list<std::string_view>, const std::string& message) { fail(message); });
}

Config parse_config(const std::string& yaml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides, ConfigOrigins* origins) {
  return config_reader::parse_root<Config>(
      yaml_text, source_name, overrides, origins,
      [](const Config& config, const ConfigOrigins& set, const Report& report) {
        check_cross_fields(config, report);
        if (const auto unread = unread_key(config, set))
          fail(fmt::format("{}: {}", set.at(unread->first), unread->second));
      },
      moved_keys());
}

Config load_config(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                   ConfigOrigins* origins) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) fail(fmt::format("config file '{}' not found", file.string()));
  if (std::filesystem::is_directory(file, ec)) fail(fmt::format("config file '{}' is a directory", file.string()));
  // A device (/dev/zero, /dev/urandom) never ends; a pipe (--config <(...)) is fine.
  const auto type = std::filesystem::status(file, ec).type();
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block)
    fail(fmt::format("config file '{}' is a device, not a file", file.string()));
  std::ifstream in(file, std::ios::binary);
  if (!in) fail(fmt::format("config file '{}' cannot be read", file.string()));
  constexpr std::streamsize kMaxConfigBytes = 1 << 20;  // the largest shipped config is a few KB
  std::string text(static_cast<size_t>(kMaxConfigBytes) + 1, '\0');
  in.read(text.data(), kMaxConfigBytes + 1);
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > static_cast<size_t>(kMaxConfigBytes))
    fail(fmt::format("config file '{}' is larger than 1 MB; a config is a few KB of YAML", file.string()));
  // An empty file (or one of comments only) would train every default for 15M steps: surely not what was meant.
  if (const YAML::Node root = config_reader::load_document(text, file.string()); !root || root.IsNull())
    fail(fmt::format("config file '{}' is empty (no keys, only comments or nothing); a config names at least env.id",
                     file.string()));
  return parse_config(text, file.string(), overrides, origins);
}

std::string to_yaml(const Config& config) { return config_reader::to_yaml_text(config); }

}  // namespace rlm
