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

namespace rlm {
namespace {

using config_reader::fail;
using config_reader::KeyCollector;

/// Checks that involve more than one field: each section's own check() (config_reader::check_sections), then those
/// that span sections.
void check_cross_fields(const Config& c, const Report& report) {
  config_reader::check_sections(c, report);
  const int64_t rollout = static_cast<int64_t>(c.env.num_envs) * c.algo.steps_per_env;
  if (c.algo.type == "ppo" && c.algo.minibatch_size > rollout) {
    report({"algo.minibatch_size", "env.num_envs", "algo.steps_per_env"},
           fmt::format("algo.minibatch_size = {} is larger than one rollout, env.num_envs * algo.steps_per_env = "
                       "{} * {} = {}",
                       c.algo.minibatch_size, c.env.num_envs, c.algo.steps_per_env, rollout));
  }
}

/// The first key in `origins` (a key the file or command line set to a non-default value) that the chosen trainer
/// does not read, with the
/// reason; nullopt when every set key is read. Setting an option that is silently ignored would spend a run on
/// something other than what the config says.
std::optional<std::pair<std::string, std::string>> unread_key(const Config& c, const ConfigOrigins& origins) {
  const bool ppo = c.algo.type == "ppo";
  static const std::vector<std::string_view> kOffPolicySections = {
      "algo.off_policy.",  "algo.sac.",           "algo.sacd.",          "algo.td3.",
      "model.off_policy.", "model.actor_memory.", "model.critic_memory."};
  static const std::vector<std::string_view> kPpoModelKeys = {
      "model.feature_size",       "model.preprocessor_size", "model.head_sizes", "model.activation",
      "model.postprocessor_size", "model.head_activation",   "model.embedding",  "model.embedding_max_len"};
  // A key set to its default changes nothing (a run folder's config.yaml writes every key).
  // A named default Config, not a temporary: GCC 12 warns (-Wmaybe-uninitialized) on destroying a temporary Config.
  static const Config default_config;
  static const std::map<std::string, std::string> defaults = config_values(default_config);
  const std::map<std::string, std::string> values = config_values(c);
  for (const auto& [key, where] : origins) {
    if (const auto it = values.find(key); it != values.end() && defaults.at(key) == it->second) continue;
    if (key.starts_with("env.options.")) {
      const auto read = env_options_read_by(c.env.id);
      const std::string_view field = std::string_view(key).substr(std::string_view("env.options.").size());
      if (std::find(read.begin(), read.end(), field) == read.end()) {
        return std::pair{key, read.empty() ? fmt::format("{}: env {} takes no env.options", key, c.env.id)
                                           : fmt::format("{}: env {} reads only env.options.{}", key, c.env.id,
                                                         fmt::join(read, ", env.options."))};
      }
      continue;
    }
    if (key.starts_with("model.cnn.") && c.model.encoder != "cnn") {
      return std::pair{key, fmt::format("{} shapes the image encoder, which only model.encoder: cnn uses", key)};
    }
    if (ppo) {
      for (std::string_view section : kOffPolicySections) {
        if (key.starts_with(section))
          return std::pair{key, fmt::format("{} is an option of the off-policy trainers; algo.type = ppo does not "
                                            "read it",
                                            key)};
      }
      continue;
    }
    if (is_ppo_only_key(key) || std::find(kPpoModelKeys.begin(), kPpoModelKeys.end(), key) != kPpoModelKeys.end()) {
      return std::pair{key, fmt::format("{} is a PPO option; algo.type = {} does not read it (its options are in "
                                        "algo.off_policy, algo.{} and model.off_policy)",
                                        key, c.algo.type, c.algo.type)};
    }
    for (std::string_view other : {"sac", "sacd", "td3"}) {
      if (other != c.algo.type && key.starts_with(fmt::format("algo.{}.", other)))
        return std::pair{key,
                         fmt::format("{} is an option of algo.type = {}, but algo.type = {}", key, other, c.algo.type)};
    }
  }
  return std::nullopt;
}

}  // namespace

bool is_ppo_only_key(const std::string& key) {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> all, out;
    AlgoConfig defaults;
    KeyCollector collector("algo", all);
    defaults.visit(collector);
    for (const std::string& k : all) {
      const bool shared = k == "algo.type" || k == "algo.total_steps";
      const bool off_policy = k.starts_with("algo.off_policy") || k.starts_with("algo.sac") ||
                              k.starts_with("algo.td3");  // algo.sac covers algo.sacd
      if (!shared && !off_policy) out.push_back(k);
    }
    return out;
  }();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

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
  return config_reader::parse_root<Config>(yaml_text, source_name, overrides, origins,
                                           [](const Config& config, const ConfigOrigins& set, const Report& report) {
                                             check_cross_fields(config, report);
                                             if (const auto unread = unread_key(config, set))
                                               fail(fmt::format("{}: {}", set.at(unread->first), unread->second));
                                           });
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
