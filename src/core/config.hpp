// Typed experiment configuration: every hyperparameter is a named field with its default here, in one place.
// The YAML key is the field name. Each struct's visit() lists its fields once, with the valid range or choices,
// and that one list drives parsing, range checks, writing YAML and the known keys behind did-you-mean hints.
// Defaults are the POPGym paper's PPO settings (Morad et al. 2023, appendix; RLlib names in the comments).
// Adding a field: declare it with a /// comment and a default, then add one v.field(...) line to visit().
#pragma once
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace rlm {

/// Valid interval of a number field; an open end excludes its bound. Infinite bounds mean "no limit".
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
};
constexpr Range in_range(double lo, double hi) { return {lo, hi, false, false}; }  ///< [lo, hi]
constexpr Range at_least(double lo) { return {lo, std::numeric_limits<double>::infinity(), false, true}; }
constexpr Range greater_than(double lo) { return {lo, std::numeric_limits<double>::infinity(), true, true}; }
constexpr Range any_number() { return {}; }

/// Valid values of a string field; an empty list accepts any non-empty string.
struct Choices {
  std::vector<std::string_view> values;
};
inline Choices one_of(std::initializer_list<std::string_view> values) { return {values}; }
inline Choices non_empty() { return {}; }

/// Upper bound of every layer width and memory size: 16x the widest published setting (FFM/SHM's 1024-wide
/// outputs, GRU 2048 in SHM's sweep), so a typo such as 2147483647 is a config error, not a failed 8 GB allocation.
inline constexpr double kMaxWidth = 32768;

/// Memory backends a config may name (model.memory.type). Extend as backends are registered in src/memory.
inline const Choices kMemoryTypes = one_of({"ffm", "gru", "kf", "shm", "spiking", "stm"});

struct ExperimentConfig {
  /// Run name: runs go to <runs_dir>/<name>/<timestamp>/. One folder name: no '/', not '.' or '..', no control
  /// characters, at most 100 characters.
  std::string name = "experiment";
  /// Base seed; every random stream is derived from it (core/seed.hpp).
  int64_t seed = 0;
  /// Where torch runs: auto (cuda when available), cpu or cuda.
  std::string device = "auto";
  /// Threads torch may use for intra-op parallelism; 0 = every hardware thread. Results are bitwise reproducible
  /// for a fixed value (reductions split by thread count), so tests and the learning config pin it to 1. At most 1024.
  int torch_threads = 0;
  /// Folder under which run folders are created (relative: to the folder rlm is called from).
  std::string runs_dir = "runs";

  template <class V>
  void visit(V& v) {
    v.field("name", name, non_empty());
    v.field("seed", seed, at_least(0));
    v.field("device", device, one_of({"auto", "cpu", "cuda"}));
    v.field("torch_threads", torch_threads, in_range(0, 1024));
    v.field("runs_dir", runs_dir, non_empty());
  }
  bool operator==(const ExperimentConfig&) const = default;
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

  template <class V>
  void visit(V& v) {
    v.field("id", id, non_empty());
    v.field("num_envs", num_envs, in_range(1, 65536));
    v.field("num_threads", num_threads, in_range(1, 1024));
    v.field("previous_action", previous_action);
    v.field("antialias", antialias);
    v.field("markovian", markovian, one_of({"partial", "full", "full_and_partial"}));
    v.field("discrete_action", discrete_action);
  }
  bool operator==(const EnvConfig&) const = default;
};

/// SHM options (YAML section model.memory.shm; shm.md, src/memory/shm.hpp). H is model.memory.hidden_size.
struct ShmConfig {
  /// Width of SHM's output Linear (POPGym post_size 1024).
  int output_size = 1024;
  /// Rows of the θ table (L = 128 in every experiment of the paper).
  int num_thetas = 128;
  /// Calibration (shm.md §2): random_theta is SHM; the others are the paper's ablations.
  std::string calibration = "random_theta";
  /// uniform: a θ row per (batch entry, step); index0_compat: always row 0, as the released POPGym code does.
  std::string theta_sampling = "uniform";
  /// Clamp the memory to ±state_clamp after every step (pomdp-baselines: 100); 0 turns it off (POPGym code).
  double state_clamp = 100.0;
  /// Add the residual Linear(x̃) to the read (both RL codebases).
  bool shortcut = true;

  template <class V>
  void visit(V& v) {
    v.field("output_size", output_size, in_range(1, kMaxWidth));
    v.field("num_thetas", num_thetas, in_range(1, kMaxWidth));
    v.field("calibration", calibration,
            one_of({"random_theta", "fixed_theta", "neural_theta", "fixed_c", "random_c", "ones"}));
    v.field("theta_sampling", theta_sampling, one_of({"uniform", "index0_compat"}));
    v.field("state_clamp", state_clamp, at_least(0));
    v.field("shortcut", shortcut);
  }
  bool operator==(const ShmConfig&) const = default;
};

/// FFM options (model.memory.ffm; ffm.md, src/memory/ffm.hpp). The output width d is model.memory.hidden_size.
struct FfmConfig {
  /// m, rows of the decaying trace (POPGym: 32).
  int memory_size = 32;
  /// c, complex contexts per row (POPGym: 4).
  int context_size = 4;
  /// Longest initial period / memory horizon t_e (ffm.md §1.4; 128 for the POMDP-Baselines setup).
  double max_period = 1024;
  /// α/ω initialisation (ffm.md §5.1): code (reference code), paper (App. B eq. 31/33), periods (Fig. 6).
  std::string init = "code";
  /// Frequency sign (ffm.md §5.2): false = the code's exp(+iωt), true = the paper's exp(−iωt).
  bool conjugate_frequency = false;
  /// Order of the real features fed to the mixing Linear (ffm.md §5.3): interleaved (code) or concatenated (paper).
  std::string flatten = "interleaved";
  /// Decay shape (ffm.md §5.16): outer (FFM) or hadamard (the FFM-HP ablation).
  std::string decay_shape = "outer";
  /// Run the scan in complex128 (the reference code's batched path) instead of complex64.
  bool double_precision = false;
  /// Input gate x̃ = v ⊙ σ(ℓ2 x); false is the FFM-NI ablation, x̃ = v (ffm.md §1.2, §3.1 Table 3).
  bool input_gate = true;
  /// Output gate; false is the FFM-NO ablation, y = LN(z) + thru (ffm.md §1.2, §3.1 Table 3).
  bool output_gate = true;
  /// Oscillating contexts ω; false is FFM-NC: b filled with 1e-6 and frozen (ffm.md §3.1, models_algos.md §2.2).
  bool oscillate = true;
  /// Learn ω; false is FFM-FC, ω kept at its init (ffm.md §3.1, models_algos.md §7.4).
  bool learn_oscillate = true;
  /// Decay α; false is FFM-ND: a filled with 0 (−1e-8 after the clamp) and frozen (ffm.md §3.1, models_algos.md §2.2).
  bool decay = true;
  /// Learn α; false is FFM-FD, α kept at its init (ffm.md §3.1, models_algos.md §7.4).
  bool learn_decay = true;
  /// Write the clamp of a back into the parameter every forward, as the standalone cell (SHM's copy) does; false is
  /// the FFM paper's POPGym cell, which clamps only inside the graph (ffm.md §5.5).
  bool clamp_writeback = false;

  template <class V>
  void visit(V& v) {
    v.field("memory_size", memory_size, in_range(1, kMaxWidth));
    v.field("context_size", context_size, in_range(1, kMaxWidth));
    v.field("max_period", max_period, greater_than(0));
    v.field("init", init, one_of({"code", "paper", "periods"}));
    v.field("conjugate_frequency", conjugate_frequency);
    v.field("flatten", flatten, one_of({"interleaved", "concatenated"}));
    v.field("decay_shape", decay_shape, one_of({"outer", "hadamard"}));
    v.field("double_precision", double_precision);
    v.field("input_gate", input_gate);
    v.field("output_gate", output_gate);
    v.field("oscillate", oscillate);
    v.field("learn_oscillate", learn_oscillate);
    v.field("decay", decay);
    v.field("learn_decay", learn_decay);
    v.field("clamp_writeback", clamp_writeback);
  }
  bool operator==(const FfmConfig&) const = default;
};

/// KF-layer options (model.memory.kf; kf.md, src/memory/kf.hpp). The layer width E is model.memory.hidden_size
/// (a Linear maps the input to E when the widths differ).
struct KfConfig {
  /// N, the state size of each layer (kf.md §1.7: 128).
  int state_size = 128;
  /// L, stacked KF layers.
  int num_layers = 1;
  /// kf (vSSM+KF, the paper's model), kf_u (vSSM+KF-u) or vssm (no Kalman update).
  std::string variant = "kf";
  /// RMSNorm output block (kf.md §1.7: on for DMC, off for POPGym and BestArm).
  bool rms_norm = false;
  /// 0: the predict step uses u_t (recommended); 1: the paper's literal u_{t-1} (kf.md §1.3).
  int input_lag = 0;
  /// time_invariant (the paper's final design) or input_dependent process noise (kf.md §1.8).
  std::string process_noise = "time_invariant";
  /// mean (the paper's final design) or mean_cov: the output Linear also reads the posterior variance.
  std::string output_features = "mean";

  template <class V>
  void visit(V& v) {
    v.field("state_size", state_size, in_range(1, kMaxWidth));
    v.field("num_layers", num_layers, in_range(1, 64));
    v.field("variant", variant, one_of({"kf", "kf_u", "vssm"}));
    v.field("rms_norm", rms_norm);
    v.field("input_lag", input_lag, in_range(0, 1));
    v.field("process_noise", process_noise, one_of({"time_invariant", "input_dependent"}));
    v.field("output_features", output_features, one_of({"mean", "mean_cov"}));
  }
  bool operator==(const KfConfig&) const = default;
};

/// Spiking-gate cell options (model.memory.spiking; spiking.md, src/memory/spiking.hpp). N_h is
/// model.memory.hidden_size.
struct SpikingConfig {
  /// Output width; 0 means the hidden size.
  int output_size = 0;
  /// Initial membrane leak k0 = 1/τ_m (spiking.md §1.2), in (0, 1).
  double leak_init = 0.5;
  /// θ of the threshold V_th = θ + X (spiking.md §1.2: 1 for Passive Visual Match, 0 for the other RL tasks).
  double theta = 0.0;
  /// X ~ U(noise_low, noise_high) while training; equal bounds give a constant threshold (noise_low <= noise_high).
  double noise_low = 0.0;
  double noise_high = 1.0;
  /// input_dependent (ĉ = W_c x) or lru (learned per-channel decay) forget gate (spiking.md §1.3).
  std::string forget_gate = "input_dependent";
  /// Spike backward: atan (1/(1+(πx)²), the paper's), gaussian (ablation) or none (true zero gradient).
  std::string surrogate = "atan";
  /// spike (the cell) or sigmoid (the "w/ sigmoid" ablation).
  std::string gate = "spike";

  template <class V>
  void visit(V& v) {
    v.field("output_size", output_size, in_range(0, kMaxWidth));
    v.field("leak_init", leak_init, Range{0, 1, true, true});
    v.field("theta", theta, any_number());
    v.field("noise_low", noise_low, any_number());
    v.field("noise_high", noise_high, any_number());
    v.field("forget_gate", forget_gate, one_of({"input_dependent", "lru"}));
    v.field("surrogate", surrogate, one_of({"atan", "gaussian", "none"}));
    v.field("gate", gate, one_of({"spike", "sigmoid"}));
  }
  bool operator==(const SpikingConfig&) const = default;
};

/// STM options (model.memory.stm; stm.md, src/memory/stm.hpp). The output width is model.memory.hidden_size.
struct StmConfig {
  /// d: the item memory is d×d, each relational slot d×d (stm.md §6: 96).
  int item_size = 96;
  /// nq = nkv: queries, relational slots and key/value pairs (stm.md §6: 8).
  int num_slots = 8;
  /// nr: per-slot width after G2 (stm.md §3.1: 96).
  int rel_size = 96;
  /// Carry the relational memory across steps (stm.md §3.3 full model); false reproduces the Atari code.
  bool carry_relational = true;
  /// Gated item-memory write (the code's rd = true); false is the "no gates" ablation.
  bool gated = true;
  /// SAM projection LayerNorm (stm.md §3.2, D6): matrix (stm_basic), row (the Atari code), vector (the paper).
  std::string qkv_norm = "matrix";

  template <class V>
  void visit(V& v) {
    v.field("item_size", item_size, in_range(1, kMaxWidth));
    v.field("num_slots", num_slots, in_range(1, kMaxWidth));
    v.field("rel_size", rel_size, in_range(1, kMaxWidth));
    v.field("carry_relational", carry_relational);
    v.field("gated", gated);
    v.field("qkv_norm", qkv_norm, one_of({"matrix", "row", "vector"}));
  }
  bool operator==(const StmConfig&) const = default;
};

struct MemoryConfig {
  /// Memory backend (one of kMemoryTypes).
  std::string type = "gru";
  /// Size of the memory: GRU hidden units, SHM's H (an H×H memory), FFM's output width d, the KF layers' width
  /// E, the spiking cell's N_h, STM's output width.
  int hidden_size = 256;
  /// Backend options; each section is read only by its backend.
  ShmConfig shm;
  FfmConfig ffm;
  KfConfig kf;
  SpikingConfig spiking;
  StmConfig stm;

  template <class V>
  void visit(V& v) {
    v.field("type", type, kMemoryTypes);
    v.field("hidden_size", hidden_size, in_range(1, kMaxWidth));
    v.section("shm", shm);
    v.section("ffm", ffm);
    v.section("kf", kf);
    v.section("spiking", spiking);
    v.section("stm", stm);
  }
  bool operator==(const MemoryConfig&) const = default;
};

struct ModelConfig {
  /// Width of the observation encoder's output.
  int feature_size = 128;
  /// Width of the layer between encoder and memory.
  int preprocessor_size = 128;
  /// Hidden layer widths of the policy and value heads.
  std::vector<int> head_sizes = {128, 128};
  /// Activation after the preprocessor and the postprocessor: leaky_relu (POPGym) or relu (SHM's POPGym code).
  std::string activation = "leaky_relu";
  /// Linear(memory output -> postprocessor_size) + activation before the heads; 0 = none (POPGym). SHM's code: 64.
  int postprocessor_size = 0;
  /// Activation after each hidden layer of the actor and critic: leaky_relu (POPGym), relu, or none (SHM's code).
  std::string head_activation = "leaky_relu";
  /// Positional embedding mixed into the features (models_algos.md §2.4): none, or sine (SHM's POPGym runs: a frozen
  /// sine table with base embedding_max_len, x·(1−s) + PE(t)·s with s learned from 0.5 and kept in [0, 1]).
  std::string embedding = "none";
  /// Rows of the sine table; t counts steps since the episode start (later steps use the last row).
  int embedding_max_len = 1024;
  /// The memory core (YAML section model.memory).
  MemoryConfig memory;

  template <class V>
  void visit(V& v) {
    v.field("feature_size", feature_size, in_range(1, kMaxWidth));
    v.field("preprocessor_size", preprocessor_size, in_range(1, kMaxWidth));
    v.field("head_sizes", head_sizes, in_range(1, kMaxWidth));
    v.field("activation", activation, one_of({"leaky_relu", "relu"}));
    v.field("postprocessor_size", postprocessor_size, in_range(0, kMaxWidth));
    v.field("head_activation", head_activation, one_of({"leaky_relu", "relu", "none"}));
    v.field("embedding", embedding, one_of({"none", "sine"}));
    v.field("embedding_max_len", embedding_max_len, at_least(1));
    v.section("memory", memory);
  }
  bool operator==(const ModelConfig&) const = default;
};

/// PPO hyperparameters (YAML section "algo").
struct PpoConfig {
  /// Training algorithm.
  std::string name = "ppo";
  /// Environment steps to train for, over all envs.
  int64_t total_steps = 15000000;
  /// Steps each env collects per rollout (RLlib rollout_fragment_length).
  int steps_per_env = 1024;
  /// complete_episodes (RLlib's, as POPGym runs it): every env collects >= steps_per_env steps and then finishes
  /// its episode, so a batch holds whole episodes only. RLlib's truncate_episodes is not implemented yet.
  std::string batch_mode = "complete_episodes";
  /// Longest training sequence (RLlib max_seq_len); must be >= the env's longest episode (checked at start).
  int max_seq_len = 1024;
  /// Timesteps per SGD minibatch, counting padding (RLlib sgd_minibatch_size).
  int minibatch_size = 8192;
  /// SGD passes over each rollout (RLlib num_sgd_iter).
  int epochs = 30;
  /// Adam learning rate.
  double lr = 5e-5;
  /// Adam epsilon.
  double adam_eps = 1e-8;
  /// Discount factor.
  double gamma = 0.99;
  /// GAE lambda (1: Monte Carlo returns).
  double gae_lambda = 1.0;
  /// PPO ratio clip.
  double clip_param = 0.3;
  /// Clip of the value loss (on the squared error, as RLlib does).
  double vf_clip_param = 10.0;
  /// Weight of the value loss.
  double vf_loss_coeff = 1.0;
  /// Weight of the entropy bonus.
  double entropy_coeff = 0.0;
  /// Initial weight of the KL penalty (adapted towards kl_target; 0: no penalty).
  double kl_coeff = 0.2;
  /// Target KL divergence per update for the adaptive penalty.
  double kl_target = 0.01;
  /// Global gradient-norm clip (<= 0: off).
  double grad_clip = 0.0;
  /// Divergence guard: stop the run (exit 4, nothing checkpointed) when an iteration's mean KL exceeds this. A
  /// healthy PPO iteration moves the policy by ~kl_target (0.01) nats; 1000 only catches a run that has blown up
  /// (lr = 1e3 reaches 1e11). 0 turns the check off; non-finite losses, gradients and parameters always stop a run.
  double max_kl = 1000.0;
  /// Standardise advantages over the whole batch of real (unpadded) steps before the epochs, as RLlib's
  /// standardized() does: (A − mean) / max(std, 1e-4), population std.
  bool normalize_advantages = true;

  template <class V>
  void visit(V& v) {
    v.field("name", name, one_of({"ppo"}));
    v.field("total_steps", total_steps, at_least(1));
    v.field("steps_per_env", steps_per_env, at_least(1));
    v.field("batch_mode", batch_mode, one_of({"complete_episodes"}));
    v.field("max_seq_len", max_seq_len, at_least(1));
    v.field("minibatch_size", minibatch_size, at_least(1));
    v.field("epochs", epochs, at_least(1));
    v.field("lr", lr, greater_than(0));
    v.field("adam_eps", adam_eps, greater_than(0));
    v.field("gamma", gamma, in_range(0, 1));
    v.field("gae_lambda", gae_lambda, in_range(0, 1));
    v.field("clip_param", clip_param, greater_than(0));
    v.field("vf_clip_param", vf_clip_param, greater_than(0));
    v.field("vf_loss_coeff", vf_loss_coeff, at_least(0));
    v.field("entropy_coeff", entropy_coeff, at_least(0));
    v.field("kl_coeff", kl_coeff, at_least(0));
    v.field("kl_target", kl_target, greater_than(0));
    v.field("grad_clip", grad_clip, any_number());
    v.field("max_kl", max_kl, at_least(0));
    v.field("normalize_advantages", normalize_advantages);
  }
  bool operator==(const PpoConfig&) const = default;
};

struct LoggingConfig {
  /// Log metrics every this many iterations.
  int every = 1;
  /// Write TensorBoard event files.
  bool tensorboard = true;
  /// Print progress to the console.
  bool console = true;
  /// Within an iteration (rollout, update epochs) the progress line moves too: on a terminal in place, a few times a
  /// second; into a file or pipe as a new line at most every progress_seconds (0: at every step of the progress).
  double progress_seconds = 30.0;

  template <class V>
  void visit(V& v) {
    v.field("every", every, at_least(1));
    v.field("tensorboard", tensorboard);
    v.field("console", console);
    v.field("progress_seconds", progress_seconds, at_least(0));
  }
  bool operator==(const LoggingConfig&) const = default;
};

struct CheckpointConfig {
  /// Save a checkpoint every this many iterations.
  int every = 10;
  /// Checkpoints kept on disk; older ones are deleted.
  int keep_last = 3;

  template <class V>
  void visit(V& v) {
    v.field("every", every, at_least(1));
    v.field("keep_last", keep_last, at_least(1));
  }
  bool operator==(const CheckpointConfig&) const = default;
};

struct EvalConfig {
  /// Episodes per evaluation.
  int episodes = 100;
  /// Take the most likely action instead of sampling.
  bool deterministic = false;

  template <class V>
  void visit(V& v) {
    v.field("episodes", episodes, at_least(1));
    v.field("deterministic", deterministic);
  }
  bool operator==(const EvalConfig&) const = default;
};

struct Config {
  ExperimentConfig experiment;
  EnvConfig env;
  ModelConfig model;
  PpoConfig algo;
  LoggingConfig logging;
  CheckpointConfig checkpoint;
  EvalConfig eval;

  template <class V>
  void visit(V& v) {
    v.section("experiment", experiment);
    v.section("env", env);
    v.section("model", model);
    v.section("algo", algo);
    v.section("logging", logging);
    v.section("checkpoint", checkpoint);
    v.section("eval", eval);
  }
  bool operator==(const Config&) const = default;
};

/// Where each key path was set: "file.yaml:7" or "command line: key=value". Keys left at their default are absent.
using ConfigOrigins = std::map<std::string, std::string>;

/// Reads a YAML file, then applies `overrides` ("key.path=value", value as a YAML scalar or flow list).
/// Missing keys keep their defaults. Throws ConfigError with a one-line message naming file, line and key path.
/// `origins`, if given, receives where each key was set, for errors found later (ConfigValueError).
Config load_config(const std::filesystem::path& file, const std::vector<std::string>& overrides = {},
                   ConfigOrigins* origins = nullptr);

/// As load_config, from text; `source_name` stands for the file in error messages.
Config parse_config(const std::string& yaml_text, const std::string& source_name,
                    const std::vector<std::string>& overrides = {}, ConfigOrigins* origins = nullptr);

/// "<where key was set>: message" (file:line or the override), or "<source>: message" for a key left at its default.
std::string locate(const ConfigOrigins& origins, const std::string& key, const std::string& source,
                   const std::string& message);

/// Runs `f`; a ConfigValueError it throws (a value only a later stage could judge) is rethrown as a ConfigError
/// located where its key was set, as parse errors are.
template <class F>
decltype(auto) with_config_locations(const ConfigOrigins& origins, const std::string& source, F&& f) {
  try {
    return f();
  } catch (const ConfigValueError& e) {
    throw ConfigError(locate(origins, e.key, source, e.what()));
  }
}

/// The fully resolved config, every key written; parse_config of it gives back an equal Config.
std::string to_yaml(const Config& config);

/// Cross-field checks (ranges of single fields are checked while parsing). Throws ConfigError showing the numbers.
void validate(const Config& config);

/// An integer written as a config accepts it: 1000, +1000 or 1e3; nullopt for 1.5, 3abc, an empty string or overflow.
std::optional<int64_t> parse_integer(std::string_view text);

/// Every field's key path and its value as YAML text ("algo.lr" -> "5e-05"); sections are not listed.
std::map<std::string, std::string> config_values(const Config& config);

/// Every key path, sections included, in declaration order ("experiment", "experiment.name", ...).
std::vector<std::string> config_keys();

}  // namespace rlm
