// A sweep file (`rlm sweep --config sweeps/X.yaml`): one or more base configs, overrides shared by every run, the
// values to sweep (a grid, an explicit list, random samples) and the seeds, expanded into an ordered list of runs.
// Each run is an ordinary `rlm train` of one config with its overrides, in a folder named after what it sets, so a
// rerun of the sweep finds its finished and interrupted runs again, and run i is the same run in a local sweep and in
// task i of the Slurm job array.
//
//   name: memory_lr                      # optional; default: the file's stem
//   configs: [../configs/gru_repeat_first.yaml]   # files or globs, relative to this file; an entry may also be
//            {file: f.yaml, label: f_medium, overrides: {env.id: popgym/RepeatFirstMedium}}: one file run as a
//            variant of its own (the label names it in run ids and tables)
//   overrides: {algo.total_steps: 20000} # every run
//   grid: {model.memory.type: [gru, ffm], algo.ppo.lr: [1e-4, 3e-4]}          # the cartesian product
//   list: [{algo.ppo.lr: 1e-4, algo.ent_coef: 0.0}, {algo.ppo.lr: 3e-4}]           # explicit sets, crossed with the
//   grid random: {samples: 8, seed: 0, params: {algo.ppo.lr: {log_uniform: [1e-5, 1e-3]}, model.memory.hidden_size:
//            {choice: [64, 128]}, algo.ent_coef: {uniform: [0, 0.02]}, algo.ppo.epochs: {int_uniform: [2, 8]}}}
//   seeds: 3                             # 0, 1, 2; or a list [0, 5, 7]
//   slurm: {partition: gpu, time: "12:00:00", gpus: 1, cpus: 4, mem: 16G, concurrency: 16, account: abc}
//
// Order: configs, then random samples (when given), then list entries, then grid points (the last key varying
// fastest), then seeds; run i of that order is Slurm array task i. A run's id is its config's path below the configs'
// common folder (without .yaml), then key=value for each swept key, then seed=N, joined by "__"; each run of characters
// a file name should not hold becomes one '-'.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rlm::sweep {

/// sbatch options of the emitted job array (`slurm:` in the sweep file, or command-line flags).
struct SlurmOptions {
  std::string partition, time, mem, account;
  int gpus = 0;                    ///< --gres=gpu:N when > 0
  int cpus = 0;                    ///< --cpus-per-task when > 0 (default: the runs' experiment.torch_threads)
  int concurrency = 0;             ///< %N on --array: at most N tasks at once (0: Slurm's limit)
  std::vector<std::string> extra;  ///< further "#SBATCH" lines, verbatim (e.g. "--qos=long")
};

/// Why `value` cannot go into an sbatch script as the Slurm option `key` (partition, time, mem, account, extra), or
/// nullopt. Every value goes into the script verbatim, so a newline would start a command of its own: control
/// characters are refused everywhere, and each option is held to the syntax sbatch documents for it.
std::optional<std::string> slurm_value_problem(const std::string& key, const std::string& value);

struct SweepRun {
  int index = 0;                 ///< position in the sweep's order (the Slurm array index)
  std::string id;                ///< folder name under the sweep's runs/
  std::filesystem::path config;  ///< the base config file
  std::string config_label;      ///< its path below the configs' common folder, without .yaml
  int64_t seed = 0;
  /// Overrides in the order train applies them: the shared ones, the config entry's, the swept ones, then
  /// experiment.seed.
  std::vector<std::string> overrides;
  /// The swept keys' values of this run (key → value text), without the seed: what collect groups by.
  std::vector<std::pair<std::string, std::string>> swept;
};

struct SweepSpec {
  std::filesystem::path file;  ///< the sweep file itself
  std::string name;
  struct ConfigEntry {
    std::filesystem::path file;
    std::string label;  ///< given in the file, or "" for the file's path below the configs' common folder
    std::vector<std::pair<std::string, std::string>> overrides;  ///< this entry's own, after the shared ones
  };
  std::vector<ConfigEntry> configs;
  std::vector<std::pair<std::string, std::string>> overrides;  ///< key → value text
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;
  std::vector<std::vector<std::pair<std::string, std::string>>> list;
  struct RandomParam {
    std::string key, kind;            ///< kind: uniform | log_uniform | int_uniform | choice
    std::vector<std::string> values;  ///< the bounds (two) or the choices
  };
  int random_samples = 0;
  uint64_t random_seed = 0;
  std::vector<RandomParam> random;
  std::vector<int64_t> seeds = {0};
  SlurmOptions slurm;
  /// The line (1-based) of each override the file writes, "key=value" as runs pass it to train, and of each key
  /// (random parameters draw their values): errors in a run's config point there rather than at a "command line".
  std::map<std::string, int> token_lines, key_lines;
};

/// Reads and checks a sweep file. Throws rlm::ConfigError "FILE:LINE: key: what is wrong" for anything malformed: an
/// unknown top-level key, a config glob that matches nothing, an empty grid list, a bad random distribution.
/// Whether each override names a real config key is left to the caller (it loads every run's config).
SweepSpec load_sweep(const std::filesystem::path& file);

/// The most runs one sweep expands to: beyond it a sweep file is a typo (seeds: 100000000), and expanding it would
/// only exhaust memory.
inline constexpr int64_t kMaxSweepRuns = 100'000;
/// How many runs expand(spec) gives (configs × list entries × grid points × random samples × seeds), saturating at
/// kMaxSweepRuns + 1; without expanding anything.
int64_t run_count(const SweepSpec& spec);

/// The runs in sweep order (see the file comment). Random samples are drawn from random_seed alone, so the same
/// file always expands to the same runs. Throws rlm::ConfigError when two runs would get the same id.
std::vector<SweepRun> expand(const SweepSpec& spec);

/// "name" → "name", "a/b c" → "a-b-c", "[64, 64]" → "-64-64-": the characters of a folder name that are safe
/// everywhere, each run of other characters replaced by one '-'.
std::string safe_name(const std::string& text);

}  // namespace rlm::sweep
