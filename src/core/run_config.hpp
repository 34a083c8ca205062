// Options every run has whatever its trainer (YAML sections experiment, logging, checkpoint, eval).
#pragma once
#include <cstdint>
#include <string>

#include "core/config_schema.hpp"

namespace rlm {

struct ExperimentConfig {
  /// Run name: runs go to <runs_dir>/<name>/<timestamp>/. One folder name: no '/', not '.' or '..', no control
  /// characters, at most 100 characters.
  std::string name = "experiment";
  /// Base seed; every random stream is derived from it (core/seed.hpp).
  int64_t seed = 0;
  /// Where torch runs: auto (cuda when available), cpu or cuda.
  std::string device = "auto";
  /// Threads torch may use for intra-op parallelism; 0 = this process's share of the CPUs: those its affinity mask
  /// allows (Slurm's, taskset's), divided among a sweep's workers running at once (core/cpu_share.hpp). Results are
  /// bitwise reproducible for a fixed value (reductions split by thread count), so tests and the learning config pin
  /// it to 1. At most 1024.
  int torch_threads = 0;
  /// Precision of the CPU matrix products that go through oneDNN (nn/linear.hpp): fp32, or bf16 (operands rounded
  /// to bfloat16, sums in float32, each result rounded to bfloat16 as autocast's are; about 2x the GEMM speed on
  /// CPUs with AVX512-BF16 or AMX-BF16, refused on others). Parameters, optimiser, states and every other op stay
  /// float32. Not the papers' setting: an option for speed.
  std::string cpu_matmul = "fp32";
  /// On a GPU, PPO's acting step (the model stepped once over every env) is captured as one CUDA graph and replayed,
  /// where the model allows it: a backend that draws random numbers when acting (SHM's θ rows) stays eager, and so
  /// does one whose capture fails; the train log says which (agents/acting_graph.hpp). Same results as eager, to
  /// float rounding. false: always eager. Nothing on the CPU.
  bool cuda_graphs = true;
  /// On a GPU, a memory's random draws (SHM's θ rows, the spiking cell's training thresholds) are made there, from a
  /// generator seeded from the run's stream (Memory::set_generator). false: drawn on the CPU, the numbers a CPU run
  /// draws, and copied over: for the spiking cell's thresholds, [T, B, 2·1024] floats per minibatch, about 70 ms of one
  /// CPU core per 8,192-step minibatch (Xeon AMX VM), so ~17 s of the 30 × 8 minibatches of a paper-config PPO
  /// iteration, which took 28 s on an H200. Nothing on the CPU.
  bool memory_draws_on_device = true;
  /// Folder under which run folders are created (relative: to the folder rlm is called from).
  std::string runs_dir = "runs";

  template <class V>
  void visit(V& v) {
    v.field("name", name, non_empty());
    v.field("seed", seed, at_least(0));
    v.field("device", device, one_of({"auto", "cpu", "cuda"}));
    v.field("torch_threads", torch_threads, in_range(0, 1024));
    v.field("cpu_matmul", cpu_matmul, one_of({"fp32", "bf16"}));
    v.field("cuda_graphs", cuda_graphs);
    v.field("memory_draws_on_device", memory_draws_on_device);
    v.field("runs_dir", runs_dir, non_empty());
  }
  /// name is one folder name and runs_dir a usable path (run_config.cpp).
  void check(const CheckContext& c) const;
  bool operator==(const ExperimentConfig&) const = default;
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
  /// Off-policy trainers: store the replay buffer in each checkpoint, so a resumed run continues bitwise as if it
  /// had never stopped (costs its size on disk: obs bytes · transitions). Without it a resume refills the buffer
  /// with warm-up episodes.
  bool replay_buffer = false;

  template <class V>
  void visit(V& v) {
    v.field("every", every, at_least(1));
    v.field("keep_last", keep_last, at_least(1));
    v.field("replay_buffer", replay_buffer);
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

}  // namespace rlm
