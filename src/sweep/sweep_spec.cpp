// Reading and expanding sweep files; see sweep_spec.hpp.
#include "sweep/sweep_spec.hpp"

#include <fmt/format.h>
#include <glob.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>

#include "core/config_io.hpp"
#include "core/error.hpp"
#include "core/text_checks.hpp"
#include "sweep/sweep_files.hpp"

namespace rlm::sweep {
namespace fs = std::filesystem;
namespace {

class Reader {
 public:
  explicit Reader(fs::path file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& node, const std::string& key, const std::string& what) const {
    fail_at(file_, node, key, what);
  }

  /// A value as an override writes it: a scalar's text, or a list/map in YAML flow style ("[64, 64]").
  std::string value_text(const YAML::Node& node, const std::string& key) const {
    if (node.IsScalar()) return node.Scalar();
    if (node.IsNull()) fail(node, key, "a value is missing");
    YAML::Emitter out;
    out << YAML::Flow << node;
    return out.c_str();
  }

  std::vector<std::pair<std::string, std::string>> mapping(const YAML::Node& node, const std::string& key) {
    if (!node.IsMap()) fail(node, key, "must be a mapping of config keys to values");
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& item : node) {
      const std::string name = item.first.as<std::string>();
      out.emplace_back(name, value_text(item.second, key + "." + name));
      note(name, out.back().second, item.second);
    }
    return out;
  }

  /// Remembers the line of the override key=value (value empty: of the key alone) for SweepSpec's token_lines.
  void note(const std::string& key, const std::optional<std::string>& value, const YAML::Node& node) {
    if (node.Mark().is_null()) return;
    key_lines.emplace(key, node.Mark().line + 1);
    if (value) token_lines.emplace(key + "=" + *value, node.Mark().line + 1);
  }
  std::map<std::string, int> token_lines, key_lines;

  template <class T>
  T number(const YAML::Node& node, const std::string& key) const {
    try {
      return node.as<T>();
    } catch (const YAML::Exception&) {
      fail(node, key, fmt::format("'{}' is not a number", node.IsScalar() ? node.Scalar() : "(not a scalar)"));
    }
  }

  const fs::path& file() const { return file_; }

 private:
  fs::path file_;
};

std::vector<fs::path> glob_configs(const Reader& in, const YAML::Node& node, const std::string& pattern) {
  const fs::path base = in.file().parent_path();
  const fs::path full = fs::path(pattern).is_absolute() ? fs::path(pattern) : base / pattern;
  glob_t found{};
  const int status = ::glob(full.c_str(), 0, nullptr, &found);
  std::vector<fs::path> out;
  if (status == 0)
    for (size_t i = 0; i < found.gl_pathc; ++i) out.emplace_back(found.gl_pathv[i]);
  ::globfree(&found);
  if (out.empty()) in.fail(node, "configs", fmt::format("'{}' matches no file ({})", pattern, full.string()));
  for (auto& p : out) p = p.lexically_normal();
  return out;
}

void read_random(Reader& in, const YAML::Node& node, SweepSpec& spec) {
  if (!node.IsMap()) in.fail(node, "random", "must be a mapping with samples, seed and params");
  for (const auto& item : node) {
    const auto key = item.first.as<std::string>();
    if (key != "samples" && key != "seed" && key != "params")
      in.fail(item.first, "random." + key, "unknown key (random takes samples, seed and params)");
  }
  if (!node["samples"]) in.fail(node, "random.samples", "is missing");
  spec.random_samples = in.number<int>(node["samples"], "random.samples");
  if (spec.random_samples < 1) in.fail(node["samples"], "random.samples", "must be at least 1");
  if (spec.random_samples > kMaxSweepRuns)
    in.fail(node["samples"], "random.samples",
            fmt::format("{} samples: a sweep holds at most {} runs", spec.random_samples, kMaxSweepRuns));
  if (node["seed"]) spec.random_seed = in.number<uint64_t>(node["seed"], "random.seed");
  const YAML::Node params = node["params"];
  if (!params || !params.IsMap() || params.size() == 0)
    in.fail(params ? params : node, "random.params", "must map config keys to distributions");
  for (const auto& item : params) {
    SweepSpec::RandomParam p;
    p.key = item.first.as<std::string>();
    in.note(p.key, std::nullopt, item.first);
    const std::string where = "random.params." + p.key;
    const YAML::Node dist = item.second;
    if (!dist.IsMap() || dist.size() != 1)
      in.fail(dist, where,
              "must be one of {uniform: [a, b]}, {log_uniform: [a, b]}, {int_uniform: [a, b]}, "
              "{choice: [...]}");
    p.kind = dist.begin()->first.as<std::string>();
    const YAML::Node values = dist.begin()->second;
    if (!values.IsSequence() || values.size() == 0) in.fail(values, where + "." + p.kind, "must be a list");
    if (p.kind == "choice") {
      for (const auto& v : values) p.values.push_back(in.value_text(v, where));
    } else if (p.kind == "uniform" || p.kind == "log_uniform" || p.kind == "int_uniform") {
      if (values.size() != 2) in.fail(values, where + "." + p.kind, "must be two bounds [low, high]");
      const double lo = in.number<double>(values[0], where), hi = in.number<double>(values[1], where);
      if (!std::isfinite(lo) || !std::isfinite(hi))
        in.fail(values, where + "." + p.kind, fmt::format("bounds must be finite numbers, got [{}, {}]", lo, hi));
      if (!(lo <= hi)) in.fail(values, where + "." + p.kind, fmt::format("low {} is above high {}", lo, hi));
      if (p.kind == "log_uniform" && !(lo > 0))
        in.fail(values, where + "." + p.kind, "log_uniform bounds must be positive");
      if (p.kind == "int_uniform" && (lo != std::floor(lo) || hi != std::floor(hi)))
        in.fail(values, where + "." + p.kind, "int_uniform bounds must be integers");
      constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53: every integer up to it is a double
      if (p.kind == "int_uniform" && (std::fabs(lo) > kMaxExactInteger || std::fabs(hi) > kMaxExactInteger))
        in.fail(values, where + "." + p.kind, "int_uniform bounds must lie within ±2^53");
      p.values = {fmt::format("{}", lo), fmt::format("{}", hi)};  // the shortest text that reads back exactly
    } else {
      in.fail(dist, where,
              fmt::format("unknown distribution '{}' (uniform, log_uniform, int_uniform, choice)", p.kind));
    }
    spec.random.push_back(std::move(p));
  }
}

}  // namespace

std::optional<std::string> slurm_value_problem(const std::string& key, const std::string& value) {
  if (has_control_character(value))
    return "holds a control character (a newline here would run as a command of the batch script)";
  if (value.empty()) return "is empty";
  // sbatch --time: minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes,
  // days-hours:minutes:seconds, or UNLIMITED / INFINITE.
  static const std::regex time(R"((UNLIMITED|INFINITE|\d+(:\d{1,2}){0,2}|\d+-\d+(:\d{1,2}){0,2}))");
  static const std::regex mem(R"(\d+[KMGT]?)");
  static const std::regex name(R"([A-Za-z0-9_.,+-]+)");
  if (key == "time" && !std::regex_match(value, time))
    return "is not a Slurm time (minutes, HH:MM:SS, D-HH, D-HH:MM:SS, UNLIMITED)";
  if (key == "mem" && !std::regex_match(value, mem)) return "is not a Slurm memory size (a number with K, M, G or T)";
  if ((key == "partition" || key == "account") && !std::regex_match(value, name))
    return "is not a Slurm name (letters, digits, _ . , + -)";
  if (key == "extra" && (!value.starts_with("-") || value.find_first_of("\"'`$\\") != std::string::npos))
    return "is not an sbatch option (it starts with '-' and holds no quotes, $, ` or \\)";
  return std::nullopt;
}

namespace {

void read_slurm(const Reader& in, const YAML::Node& node, SlurmOptions& slurm) {
  if (!node.IsMap()) in.fail(node, "slurm", "must be a mapping of sbatch options");
  for (const auto& item : node) {
    const auto key = item.first.as<std::string>();
    const YAML::Node v = item.second;
    const std::string where = "slurm." + key;
    if (key == "partition") {
      slurm.partition = in.value_text(v, where);
    } else if (key == "time") {
      slurm.time = in.value_text(v, where);
    } else if (key == "mem") {
      slurm.mem = in.value_text(v, where);
    } else if (key == "account") {
      slurm.account = in.value_text(v, where);
    } else if (key == "gpus") {
      slurm.gpus = in.number<int>(v, where);
    } else if (key == "cpus") {
      slurm.cpus = in.number<int>(v, where);
    } else if (key == "concurrency") {
      slurm.concurrency = in.number<int>(v, where);
    } else if (key == "extra") {
      if (!v.IsSequence()) in.fail(v, where, "must be a list of sbatch options");
      for (const auto& e : v) slurm.extra.push_back(in.value_text(e, where));
    } else {
      in.fail(item.first, where,
              "unknown key (slurm takes partition, time, gpus, cpus, mem, account, concurrency, extra)");
    }
    if (key == "extra") {
      for (const auto& e : v)
        if (const auto problem = slurm_value_problem(key, in.value_text(e, where))) in.fail(e, where, *problem);
    } else if (key != "gpus" && key != "cpus" && key != "concurrency") {
      if (const auto problem = slurm_value_problem(key, in.value_text(v, where))) in.fail(v, where, *problem);
    }
    if ((key == "gpus" || key == "cpus" || key == "concurrency") && in.number<int>(v, where) < 0)
      in.fail(v, where, "must not be negative");
  }
}

std::string format_sample(double value) { return fmt::format("{:.4g}", value); }

/// What a grid value's text means, for spotting one value listed twice: a number's shortest exact text ("0.10" and
/// "1e-1" are "0.1"), any other text as it is.
std::string denoted_value(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(text.c_str(), &end);
  if (!text.empty() && end == text.c_str() + text.size() && errno == 0 && std::isfinite(number))
    return fmt::format("{}", number);
  return text;
}

}  // namespace

std::string safe_name(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-' || c == '=' || c == '+';
    if (ok) {
      out += c;
    } else if (out.empty() || out.back() != '-') {  // "[64, 64]" -> "-64-64-": one '-' per run of them
      out += '-';
    }
  }
  return out;
}

SweepSpec load_sweep(const fs::path& file) {
  SweepSpec spec;
  spec.file = file;
  spec.name = safe_name(file.stem().string());  // the job's name and the script's file name: no spaces or quotes
  Reader in(file);
  const YAML::Node root = load_yaml_file(file, "sweep file");
  if (!root.IsMap())
    throw ConfigError(fmt::format("{}: a sweep file is a mapping (configs, grid, seeds, ...)", file.string()));
  for (const auto& item : root) {
    const auto key = item.first.as<std::string>();
    const YAML::Node v = item.second;
    if (key == "name") {
      spec.name = in.value_text(v, key);
      if (spec.name.empty() || safe_name(spec.name) != spec.name)
        in.fail(v, key, fmt::format("'{}' is not a folder name (letters, digits, . _ - = +)", spec.name));
    } else if (key == "configs") {
      const auto add = [&](const YAML::Node& n) {
        if (!n.IsMap()) {
          for (auto& p : glob_configs(in, n, in.value_text(n, key))) spec.configs.push_back({std::move(p), "", {}});
          return;
        }
        SweepSpec::ConfigEntry entry;
        for (const auto& field : n) {
          const auto name = field.first.as<std::string>();
          if (name == "file") {
            const auto files = glob_configs(in, field.second, in.value_text(field.second, "configs.file"));
            if (files.size() != 1) in.fail(field.second, "configs.file", "must name exactly one file");
            entry.file = files.front();
          } else if (name == "label") {
            entry.label = in.value_text(field.second, "configs.label");
          } else if (name == "overrides") {
            entry.overrides = in.mapping(field.second, "configs.overrides");
          } else {
            in.fail(field.first, "configs." + name, "unknown key (a config entry takes file, label, overrides)");
          }
        }
        if (entry.file.empty()) in.fail(n, "configs", "an entry given as a mapping needs file");
        spec.configs.push_back(std::move(entry));
      };
      if (v.IsSequence()) {
        for (const auto& n : v) add(n);
      } else {
        add(v);
      }
    } else if (key == "overrides") {
      spec.overrides = in.mapping(v, key);
    } else if (key == "grid") {
      if (!v.IsMap()) in.fail(v, key, "must map config keys to lists of values");
      for (const auto& g : v) {
        const auto name = g.first.as<std::string>();
        if (!g.second.IsSequence() || g.second.size() == 0)
          in.fail(g.second, key + "." + name, "must be a non-empty list of values");
        std::vector<std::string> values;
        std::map<std::string, std::string> seen;  // the value each text denotes -> its first text
        for (const auto& value : g.second) {
          values.push_back(in.value_text(value, key + "." + name));
          in.note(name, values.back(), value);
          const auto [it, fresh] = seen.emplace(denoted_value(values.back()), values.back());
          if (!fresh)
            in.fail(value, key + "." + name,
                    fmt::format("lists the value {} twice ('{}' and '{}'): both would train the same run", it->first,
                                it->second, values.back()));
        }
        spec.grid.emplace_back(name, std::move(values));
      }
    } else if (key == "list") {
      if (!v.IsSequence() || v.size() == 0) in.fail(v, key, "must be a non-empty list of mappings");
      for (const auto& entry : v) spec.list.push_back(in.mapping(entry, key));
    } else if (key == "random") {
      read_random(in, v, spec);
    } else if (key == "seeds") {
      spec.seeds.clear();
      if (v.IsSequence()) {
        for (const auto& s : v) spec.seeds.push_back(in.number<int64_t>(s, key));
        if (spec.seeds.empty()) in.fail(v, key, "must list at least one seed");
      } else {
        const auto n = in.number<int64_t>(v, key);
        if (n < 1) in.fail(v, key, "must be at least 1 (the number of seeds) or a list of seeds");
        if (n > kMaxSweepRuns)
          in.fail(v, key, fmt::format("{} seeds: a sweep holds at most {} runs", n, kMaxSweepRuns));
        for (int64_t s = 0; s < n; ++s) spec.seeds.push_back(s);
      }
      if (std::set<int64_t>(spec.seeds.begin(), spec.seeds.end()).size() != spec.seeds.size())
        in.fail(v, key, "lists a seed twice");
    } else if (key == "slurm") {
      read_slurm(in, v, spec.slurm);
    } else {
      in.fail(item.first, key,
              "unknown key (a sweep file takes name, configs, overrides, grid, list, random, seeds, slurm)");
    }
  }
  if (spec.configs.empty()) in.fail(root, "configs", "is missing: name at least one config file");
  spec.token_lines = std::move(in.token_lines);
  spec.key_lines = std::move(in.key_lines);
  return spec;
}

int64_t run_count(const SweepSpec& spec) {
  int64_t count = 1;
  const auto times = [&](size_t n) { count = std::min<int64_t>(count * static_cast<int64_t>(n), kMaxSweepRuns + 1); };
  times(spec.configs.size());
  times(spec.list.empty() ? 1 : spec.list.size());
  for (const auto& [key, values] : spec.grid) times(values.size());
  times(spec.random_samples > 0 ? static_cast<size_t>(spec.random_samples) : 1);
  times(spec.seeds.size());
  return count;
}

std::vector<SweepRun> expand(const SweepSpec& spec) {
  if (run_count(spec) > kMaxSweepRuns)
    throw ConfigError(
        fmt::format("{}: the sweep expands to more than {} runs (configs × list entries × grid points × "
                    "random samples × seeds); split it, or check its counts",
                    spec.file.string(), kMaxSweepRuns));
  using Values = std::vector<std::pair<std::string, std::string>>;
  // The swept combinations: list entries × grid points, then random samples (each alone).
  std::vector<Values> combos = spec.list.empty() ? std::vector<Values>{{}} : spec.list;
  for (const auto& [key, values] : spec.grid) {
    std::vector<Values> next;
    for (const auto& combo : combos)
      for (const auto& value : values) {
        Values v = combo;
        v.emplace_back(key, value);
        next.push_back(std::move(v));
      }
    combos = std::move(next);
  }
  if (spec.random_samples > 0) {
    std::mt19937_64 rng(spec.random_seed);
    std::vector<Values> samples;
    for (int s = 0; s < spec.random_samples; ++s) {
      for (const auto& combo : combos) {
        Values v = combo;
        for (const auto& p : spec.random) {
          if (p.kind == "choice") {
            v.emplace_back(p.key, p.values[std::uniform_int_distribution<size_t>(0, p.values.size() - 1)(rng)]);
            continue;
          }
          const double lo = std::stod(p.values[0]), hi = std::stod(p.values[1]);
          if (p.kind == "uniform") {
            v.emplace_back(p.key, format_sample(std::uniform_real_distribution<double>(lo, hi)(rng)));
          } else if (p.kind == "log_uniform") {
            const double x = std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng);
            v.emplace_back(p.key, format_sample(std::exp(x)));
          } else {
            v.emplace_back(p.key, std::to_string(std::uniform_int_distribution<int64_t>(
                                      static_cast<int64_t>(lo), static_cast<int64_t>(hi))(rng)));
          }
        }
        samples.push_back(std::move(v));
      }
    }
    combos = std::move(samples);
  }

  // Config labels: each file's path below the configs' common folder, without .yaml.
  fs::path common = spec.configs.front().file.parent_path();
  for (const auto& c : spec.configs) {
    while (!common.empty() && c.file.lexically_relative(common).string().starts_with(".."))
      common = common.parent_path();
  }
  std::vector<SweepRun> runs;
  std::set<std::string> ids;
  for (const auto& entry : spec.configs) {
    const fs::path& config = entry.file;
    fs::path label = spec.configs.size() == 1 ? config.filename() : config.lexically_relative(common);
    label.replace_extension();
    if (!entry.label.empty()) label = entry.label;
    for (const auto& combo : combos) {
      for (const int64_t seed : spec.seeds) {
        SweepRun run;
        run.index = static_cast<int>(runs.size());
        run.config = config;
        run.config_label = label.generic_string();
        run.seed = seed;
        run.swept = combo;
        std::string id = safe_name(run.config_label);
        for (const auto& [key, value] : spec.overrides) run.overrides.push_back(key + "=" + value);
        for (const auto& [key, value] : entry.overrides) run.overrides.push_back(key + "=" + value);
        for (const auto& [key, value] : combo) {
          run.overrides.push_back(key + "=" + value);
          id += "__" + safe_name(key + "=" + value);
        }
        run.overrides.push_back("experiment.seed=" + std::to_string(seed));
        run.id = id + "__seed=" + std::to_string(seed);
        if (!ids.insert(run.id).second)
          throw ConfigError(
              fmt::format("{}: two runs of the sweep would share the folder '{}' (a value listed "
                          "twice, or two values that differ only in characters a folder name "
                          "cannot hold)",
                          spec.file.string(), run.id));
        runs.push_back(std::move(run));
      }
    }
  }
  return runs;
}

}  // namespace rlm::sweep
