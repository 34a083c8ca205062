// The sweep runner shared by `rlm sweep` and `rlm reproduce`; see sweep_runner.hpp.
#include "app/sweep_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <string_view>
#include <thread>

#include "agents/experiment_config.hpp"
#include "app/subprocess.hpp"
#include "app/thread_workers.hpp"
#include "app/training.hpp"
#include "core/atomic_file.hpp"
#include "core/config_io.hpp"
#include "core/config_reader.hpp"
#include "core/cpu_share.hpp"
#include "core/error.hpp"
#include "core/folders.hpp"
#include "core/run_lock.hpp"
#include "core/run_output.hpp"
#include "core/stop_signal.hpp"
#include "core/text_checks.hpp"

namespace rlm::app {
namespace fs = std::filesystem;
namespace {

std::atomic<int> g_sweep_stop = 0;  // lock-free: set by a handler, maybe on another thread (core/stop_signal.hpp)
extern "C" void sweep_stop(int signal) { g_sweep_stop = signal; }

std::string quote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;!#~") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// This program's path, for the Slurm script and the workers' argv[0]. Resolved on first use: once a rebuild has
/// replaced the file, /proc/self/exe names a deleted one and cannot be made canonical.
const fs::path& self_executable() {
  static const fs::path path = fs::canonical("/proc/self/exe");
  return path;
}

std::string shell_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += quote(w);
  }
  return out;
}

nlohmann::json manifest(const sweep::SweepSpec& spec, const std::vector<sweep::SweepRun>& runs) {
  nlohmann::json j = {{"name", spec.name}, {"sweep_file", fs::absolute(spec.file).lexically_normal().string()}};
  auto& list = j["runs"] = nlohmann::json::array();
  for (const auto& r : runs) {
    nlohmann::json swept = nlohmann::json::object();
    for (const auto& [k, v] : r.swept) swept[k] = v;
    list.push_back({{"index", r.index},
                    {"id", r.id},
                    {"config", r.config.string()},
                    {"seed", r.seed},
                    {"overrides", r.overrides},
                    {"swept", swept}});
  }
  return j;
}

/// Loads every run's config (errors point at the sweep file's line) and returns the largest torch_threads. The runs
/// of `one_process` (those an `--in-process` sweep trains; empty: none) share one process, and with it torch's thread
/// count and CPU matrix products, so they must ask for the same experiment.torch_threads and cpu_matmul (UsageError
/// naming two runs that differ).
int check_run_configs(const SweepJob& job, std::span<const sweep::SweepRun> one_process) {
  const auto& spec = job.spec;
  int threads = 1;
  std::optional<ExperimentConfig> shared;  // the first of one_process's runs
  for (const auto& run : job.runs) {
    std::optional<Config> config;
    try {
      config = load_config(run.config, run.overrides);
      threads = std::max(threads, config->experiment.torch_threads);
    } catch (const std::exception& e) {
      // The sweep hands its overrides to train as command-line tokens, and a config error names a bad one as
      // "command line: TOKEN: ...": point at the sweep file's line that wrote it instead.
      const std::string message = e.what();
      for (const std::string& token : run.overrides) {
        const std::string prefix = "command line: " + config_reader::shown_token(token) + ":";
        if (!message.starts_with(prefix)) continue;
        const auto by_token = spec.token_lines.find(token);
        const auto by_key = spec.key_lines.find(token.substr(0, token.find('=')));
        if (by_token == spec.token_lines.end() && by_key == spec.key_lines.end()) break;  // the seed, say
        const int line = by_token != spec.token_lines.end() ? by_token->second : by_key->second;
        throw ConfigError(fmt::format("{}:{}: {}{} (run {}, {})", spec.file.string(), line, token,
                                      message.substr(prefix.size() - 1), run.index, run.id));
      }
      throw ConfigError(fmt::format("{}: run {} ({}): {}", spec.file.string(), run.index, run.id, message));
    }
    if (one_process.empty() || run.index < one_process.front().index || run.index > one_process.back().index) continue;
    if (!shared) {
      shared = config->experiment;
      continue;
    }
    const auto differ = [&](const char* key, const auto& a, const auto& b) {
      if (a == b) return;
      throw UsageError(
          fmt::format("--in-process: the runs share one process, but run {} ({}) has {} = {} and run {} ({}) "
                      "has {}; give them one value, or train them as processes (without --in-process)",
                      one_process.front().index, one_process.front().id, key, a, run.index, run.id, b));
    };
    differ("experiment.torch_threads", shared->torch_threads, config->experiment.torch_threads);
    differ("experiment.cpu_matmul", shared->cpu_matmul, config->experiment.cpu_matmul);
  }
  return threads;
}

/// The run's `rlm: error:` line (or its last line) among what it wrote from `offset` on: a log is appended to by
/// every attempt, and an earlier attempt's error is not this one's.
std::string last_error_line(const fs::path& log, std::uintmax_t offset) {
  std::ifstream in(log);
  in.seekg(static_cast<std::streamoff>(offset));
  std::string line, error, last;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    last = line;
    if (line.starts_with("rlm: error:")) error = line;
  }
  return error.empty() ? last : error;
}

// ---- what the sweep's folder holds ----
fs::path run_dir_of(const SweepJob& job, const sweep::SweepRun& run) { return job.dir / "runs" / run.id; }

bool has_checkpoint(const fs::path& run_dir) {
  std::error_code ec;
  return fs::is_directory(run_dir / "checkpoints", ec) && !fs::is_empty(run_dir / "checkpoints", ec);
}

/// A run whose folder holds training done with other values than the sweep file now gives it: what differs, as
/// "key old -> new" items. Empty when the folder has nothing to keep (no done.json, no checkpoint) or agrees.
std::vector<std::string> changed_values(const sweep::SweepRun& run, const fs::path& run_dir) {
  std::error_code ec;
  if (!fs::exists(run_dir / "done.json", ec) && !has_checkpoint(run_dir)) return {};
  if (!fs::exists(run_dir / "config.yaml", ec)) return {};
  const auto trained = config_values(load_config(run_dir / "config.yaml"));
  const auto wanted = config_values(load_config(run.config, run.overrides));
  std::vector<std::string> changes;
  for (const auto& [key, value] : wanted) {
    const auto it = trained.find(key);
    const std::string old = it == trained.end() ? "(absent)" : it->second;
    if (old != value) changes.push_back(fmt::format("{} {} -> {}", key, old, value));
  }
  for (const auto& [key, value] : trained)
    if (!wanted.contains(key)) changes.push_back(fmt::format("{} {} -> (absent)", key, value));
  return changes;
}

/// Empties a locked run folder, keeping only the lock file.
void clear_run_folder(const fs::path& run_dir) {
  for (const auto& entry : fs::directory_iterator(run_dir))
    if (entry.path().filename() != ".lock") fs::remove_all(entry.path());
}

/// "run I (id): key old -> new, ..." with at most three of the changes.
std::string describe_changes(const sweep::SweepRun& run, const std::vector<std::string>& changes) {
  std::string items = changes.front();
  for (size_t i = 1; i < std::min<size_t>(changes.size(), 3); ++i) items += ", " + changes[i];
  if (changes.size() > 3) items += fmt::format(" and {} more", changes.size() - 3);
  return fmt::format("run {} ({}): {}", run.index, run.id, items);
}

[[noreturn]] void refuse_changed_runs(const SweepJob& job, size_t changed, const std::vector<std::string>& described) {
  std::string list = described.front();
  for (size_t i = 1; i < described.size(); ++i) list += "; " + described[i];
  if (changed > described.size()) list += fmt::format("; and {} more runs", changed - described.size());
  throw ConfigError(fmt::format(
      "{}: {} run(s) in {} were trained with other values than the sweep file now gives ({}); add --rerun-changed "
      "to train them again, or give the edited sweep a new --out folder",
      job.spec.file.string(), changed, (job.dir / "runs").string(), list));
}

/// Before a sweep starts its workers or emits its array: refuses (ConfigError) when runs in the folder were trained
/// with values the sweep file no longer gives, unless `rerun_changed`, which empties those folders (each under its
/// lock, so never one in use) so that they train again.
void check_unchanged_runs(const SweepJob& job, std::span<const sweep::SweepRun> runs, bool rerun_changed) {
  std::vector<std::string> described;
  size_t changed = 0;
  for (const auto& run : runs) {
    const fs::path dir = run_dir_of(job, run);
    const auto changes = changed_values(run, dir);
    if (changes.empty()) continue;
    ++changed;
    if (rerun_changed) {
      const RunFolderLock lock(dir);
      clear_run_folder(dir);
      fmt::print("[sweep] run {} ({}) was trained with other values ({}); it trains again\n", run.index, run.id,
                 changes.front());
    } else if (described.size() < 3) {
      described.push_back(describe_changes(run, changes));
    }
  }
  if (!rerun_changed && changed > 0) refuse_changed_runs(job, changed, described);
}

/// --only's value: "I", one run trained in this process (what a worker does), or "A-B", runs A to B with local
/// workers (what a packed array task does; B past the last run means the last).
struct OnlyRuns {
  size_t first = 0, last = 0;
  bool range = false;
};

OnlyRuns parse_only(const std::string& value, size_t runs) {
  const size_t dash = value.find('-');
  const auto a = parse_integer(value.substr(0, dash));
  const auto b = dash == std::string::npos ? a : parse_integer(value.substr(dash + 1));
  if (!a || !b || *a < 0 || *b < *a)
    throw UsageError(fmt::format("--only {}: not a run index I or a range of them A-B", value));
  if (static_cast<size_t>(*a) >= runs)
    throw UsageError(fmt::format("--only {}: the sweep has {} runs (0 to {})", value, runs, runs - 1));
  return {static_cast<size_t>(*a), std::min(static_cast<size_t>(*b), runs - 1), dash != std::string::npos};
}

// ---- one run (--only I): what a worker and a Slurm array task do ----
int run_one(const SweepJob& job, int index, bool dry_run, bool rerun_changed) {
  if (index < 0 || index >= static_cast<int>(job.runs.size()))
    throw UsageError(
        fmt::format("--only {}: the sweep has {} runs (0 to {})", index, job.runs.size(), job.runs.size() - 1));
  const sweep::SweepRun& run = job.runs[static_cast<size_t>(index)];
  const fs::path dir = run_dir_of(job, run);
  if (dry_run) {
    if (fs::exists(dir / "done.json")) {
      fmt::print("[sweep] run {} ({}) is finished; skipped\n", run.index, run.id);
    } else {
      fmt::print("{}\n", has_checkpoint(dir) ? "rlm train --resume " + quote(dir.string())
                                             : train_command_line(run) + "  # run folder " + dir.string());
    }
    return 0;
  }
  // The stop handlers, and the sweep's pid for a worker, are in already: main.cpp installs them before libtorch loads.
  // The folder's lock first: another process (a second sweep on the same folder, a stray worker) may be training
  // this run, and nothing here may read its state for a decision, delete it or write into it.
  create_folders(dir, "run folder");
  std::optional<RunFolderLock> lock;
  try {
    lock.emplace(dir);
  } catch (const RunFolderInUse& e) {
    fmt::print(run_output(), "[sweep] run {} ({}) is in use by {}; not started\n", run.index, run.id,
               e.holder.empty() ? std::string("another process") : "pid " + e.holder);
    return kExitRunInUse;
  }
  if (const auto changes = changed_values(run, dir); !changes.empty()) {
    if (!rerun_changed) refuse_changed_runs(job, 1, {describe_changes(run, changes)});
    clear_run_folder(dir);
  }
  if (fs::exists(dir / "done.json")) {
    fmt::print(run_output(), "[sweep] run {} ({}) is finished; skipped\n", run.index, run.id);
    return 0;
  }
  const auto start = std::chrono::steady_clock::now();
  int status = 0;
  try {
    if (has_checkpoint(dir)) {
      status = resume_run(dir, {}, &*lock);
    } else {
      // Died before its first checkpoint, or never started: nothing in the folder is worth keeping.
      clear_run_folder(dir);
      status = train_new_run_in(run.config.string(), run.overrides, dir, *lock);
    }
  } catch (const std::exception& e) {
    write_file_atomic(dir / "failed.json", nlohmann::json{{"index", run.index}, {"error", e.what()}}.dump(2));
    throw;
  }
  if (status == 0) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fs::remove(dir / "failed.json");
    write_file_atomic(dir / "done.json",
                      nlohmann::json{{"index", run.index}, {"id", run.id}, {"seconds", seconds}}.dump(2));
  }
  return status;
}

// ---- local workers ----
/// How many local workers run at once, and where: `jobs` of them, or, with GPUs, `runs_per_gpu` on each of `gpus`
/// (CUDA_VISIBLE_DEVICES values), each worker seeing only its own; as processes, or threads of this one (`in_process`).
struct Placement {
  int jobs = 1;
  std::vector<std::string> gpus;
  int runs_per_gpu = 0;
  bool in_process = false;
};

fs::path log_of(const SweepJob& job, const sweep::SweepRun& run) { return job.dir / "logs" / (run.id + ".log"); }

std::uintmax_t size_or_zero(const fs::path& file) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  return ec ? 0 : size;
}

/// Starts `rlm <child_command> --only I` for `run`; with a `gpu`, the worker sees only that one (CUDA_VISIBLE_DEVICES).
/// It learns that `workers` processes share the CPUs (RLM_CPU_SHARE), so that a run with experiment.torch_threads 0
/// sizes its torch pool to its share rather than to every CPU.
pid_t spawn_run(const SweepJob& job, const sweep::SweepRun& run, const std::string& gpu, int workers) {
  const fs::path log = log_of(job, run);
  std::vector<std::string> argv_s = {self_executable().string()};
  argv_s.insert(argv_s.end(), job.child_command.begin(), job.child_command.end());
  argv_s.insert(argv_s.end(), {"--only", std::to_string(run.index)});
  std::vector<char*> argv = null_terminated(argv_s);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // The workers learn the sweep's pid: they stop (through a checkpoint) when it dies, and do not take its forwarded
  // copy of a signal for a second one (core/stop_signal.hpp).
  std::vector<std::string> set = {fmt::format("{}={}", kSweepParentVariable, getpid()),
                                  fmt::format("{}={}", kCpuShareVariable, workers)};
  if (!gpu.empty()) set.push_back("CUDA_VISIBLE_DEVICES=" + gpu);
  std::vector<std::string> env_s = environment_with(set);
  std::vector<char*> envp = null_terminated(env_s);
  // SIGINT and SIGTERM blocked until the worker's handlers are in (core/stop_signal.cpp): a stop sent while it
  // loads then waits for them instead of killing it.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  posix_spawnattr_setsigmask(&attributes, &stops);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  // /proc/self/exe, not the path: every worker runs the program this sweep started with, even when a rebuild has
  // replaced the file on disk during a sweep of many hours.
  const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) throw UsageError(fmt::format("cannot start a worker for run {}: {}", run.id, std::strerror(rc)));
  return pid;
}

/// How a worker ended: its exit status, or the signal that killed it (a process).
struct WorkerEnd {
  const sweep::SweepRun* run = nullptr;
  int exit_status = 0;
  int signal = 0;
};

/// run_local's workers, each training one run: processes `rlm <child_command> --only I`, or threads of this process.
class Workers {
 public:
  virtual ~Workers() = default;
  /// Starts `run`'s worker; `gpu`: its index in Placement::gpus, or -1.
  virtual void start(const sweep::SweepRun& run, int gpu) = 0;
  /// A worker that has ended, waiting a little (20 ms) for one; nullopt if none did.
  virtual std::optional<WorkerEnd> poll() = 0;
  virtual size_t running() const = 0;
  /// The signal that asked the sweep to stop, or 0.
  virtual int stop_requested() const = 0;
  /// Asks every running worker to stop through a checkpoint.
  virtual void forward_stop() = 0;
};

class ProcessWorkers final : public Workers {
 public:
  ProcessWorkers(const SweepJob& job, const Placement& placement, int jobs)
      : job_(job), placement_(placement), jobs_(jobs) {
    struct sigaction action {};
    action.sa_handler = sweep_stop;  // no SA_RESTART: waitpid returns EINTR so the stop is seen at once
    sigemptyset(&action.sa_mask);
    g_sweep_stop = 0;
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~ProcessWorkers() override {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  ProcessWorkers(const ProcessWorkers&) = delete;
  ProcessWorkers& operator=(const ProcessWorkers&) = delete;

  void start(const sweep::SweepRun& run, int gpu) override {
    const std::string gpu_name = gpu < 0 ? "" : placement_.gpus[static_cast<size_t>(gpu)];
    children_[spawn_run(job_, run, gpu_name, jobs_)] = &run;
  }
  std::optional<WorkerEnd> poll() override {
    int wstatus = 0;
    // Polled, not blocking: where the stop handlers run on a thread of their own (a packed array task, `--only A-B`,
    // core/stop_signal.hpp), a signal does not interrupt this thread's waitpid.
    const pid_t pid = waitpid(-1, &wstatus, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return std::nullopt;
    }
    if (pid < 0) throw UsageError(fmt::format("waiting for the sweep's workers failed: {}", std::strerror(errno)));
    const auto it = children_.find(pid);
    if (it == children_.end()) return std::nullopt;
    const WorkerEnd end = {it->second, WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 0,
                           WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0};
    children_.erase(it);
    return end;
  }
  size_t running() const override { return children_.size(); }
  int stop_requested() const override { return g_sweep_stop; }
  // The workers checkpoint and stop on SIGTERM (`rlm train`'s handling); a rerun resumes them.
  void forward_stop() override {
    for (const auto& [pid, run] : children_) kill(pid, SIGTERM);
  }

 private:
  const SweepJob& job_;
  const Placement& placement_;
  int jobs_;
  std::map<pid_t, const sweep::SweepRun*> children_;
  struct sigaction old_int_ {
  }, old_term_{};
};

/// `--in-process`: each run trains on a thread of this process, as `--only I` would (app/thread_workers.hpp), its GPU
/// given by index among this process's devices (the entries of its CUDA_VISIBLE_DEVICES, in order). This process took
/// SIGINT and SIGTERM as a trainer does (main.cpp), and every run polls that stop itself.
class InProcessWorkers final : public Workers {
 public:
  InProcessWorkers(const SweepJob& job, bool rerun_changed, int jobs) : job_(job), rerun_changed_(rerun_changed) {
    // Before any run starts: their torch_threads 0 is a jobs-th of the CPUs (core/cpu_share.hpp).
    setenv(kCpuShareVariable, std::to_string(jobs).c_str(), /*overwrite=*/1);
  }
  void start(const sweep::SweepRun& run, int gpu) override {
    const int index = run.index;
    threads_.start(
        index, [this, index] { return run_one(job_, index, /*dry_run=*/false, rerun_changed_); }, log_of(job_, run),
        gpu);
  }
  std::optional<WorkerEnd> poll() override {
    const auto ended = threads_.poll(std::chrono::milliseconds(20));
    if (!ended) return std::nullopt;
    return WorkerEnd{&job_.runs[static_cast<size_t>(ended->first)], ended->second, 0};  // the id is the run's index
  }
  size_t running() const override { return threads_.running(); }
  int stop_requested() const override { return stop_signal(); }
  void forward_stop() override {}  // every run polls stop_signal() itself

 private:
  const SweepJob& job_;
  bool rerun_changed_;
  ThreadWorkers threads_;
};

/// Trains runs [first, last] of the sweep with local workers placed as `placement` says.
int run_local(const SweepJob& job, size_t first, size_t last, const Placement& placement, bool rerun_changed) {
  const auto& spec = job.spec;
  const auto& runs = job.runs;
  const fs::path& sweep_dir = job.dir;
  self_executable();  // resolved now, while the file is surely there
  create_folders(sweep_dir / "logs", "sweep folder");
  write_file_atomic(sweep_dir / "sweep.json", manifest(spec, runs).dump(2));
  std::vector<const sweep::SweepRun*> queue;
  int already = 0;
  for (size_t i = first; i <= last; ++i) {
    if (fs::exists(sweep_dir / "runs" / runs[i].id / "done.json")) {
      ++already;
    } else {
      queue.push_back(&runs[i]);
    }
  }
  const int jobs =
      placement.gpus.empty() ? placement.jobs : placement.runs_per_gpu * static_cast<int>(placement.gpus.size());
  const std::string part = first == 0 && last + 1 == runs.size() ? "" : fmt::format(" {} to {} of", first, last);
  fmt::print("[sweep] {}:{} {} runs ({} finished before), {} {}{}; folder {}\n", spec.name, part, runs.size(), already,
             jobs, placement.in_process ? "thread(s) of this process" : "worker(s)",
             placement.gpus.empty()
                 ? ""
                 : fmt::format(", {} on each of GPU {}", placement.runs_per_gpu, fmt::join(placement.gpus, ", ")),
             sweep_dir.string());
  std::fflush(stdout);
  std::vector<int> on_gpu(placement.gpus.size(), 0);  // workers running on each GPU
  struct Started {
    std::chrono::steady_clock::time_point start;
    std::uintmax_t log_offset = 0;  ///< the log's size when this attempt started
    int gpu = -1;                   ///< its index in Placement::gpus, or -1
  };
  std::map<const sweep::SweepRun*, Started> started;
  std::unique_ptr<Workers> workers;
  if (placement.in_process) {
    workers = std::make_unique<InProcessWorkers>(job, rerun_changed, jobs);
  } else {
    workers = std::make_unique<ProcessWorkers>(job, placement, jobs);
  }

  size_t next = 0;
  int finished = 0, failed = 0, stopped = 0, busy = 0;
  bool forwarded = false;
  while (next < queue.size() || workers->running() > 0) {
    while (!workers->stop_requested() && next < queue.size() && static_cast<int>(workers->running()) < jobs) {
      const auto* run = queue[next++];
      const auto offset = size_or_zero(log_of(job, *run));
      // The GPU with the fewest workers (fewer than runs_per_gpu, since fewer than `jobs` run).
      const int gpu =
          on_gpu.empty() ? -1 : static_cast<int>(std::min_element(on_gpu.begin(), on_gpu.end()) - on_gpu.begin());
      workers->start(*run, gpu);
      started[run] = {std::chrono::steady_clock::now(), offset, gpu};
      if (gpu >= 0) ++on_gpu[static_cast<size_t>(gpu)];
      fmt::print("[sweep] started {} ({}/{}){}\n", run->id, run->index + 1, runs.size(),
                 gpu < 0 ? "" : " on GPU " + placement.gpus[static_cast<size_t>(gpu)]);
      std::fflush(stdout);
    }
    if (workers->stop_requested() && !forwarded) {
      workers->forward_stop();
      forwarded = true;
    }
    if (workers->running() == 0) break;
    const auto end = workers->poll();
    if (!end) continue;
    const Started attempt = started.at(end->run);
    started.erase(end->run);
    if (attempt.gpu >= 0) --on_gpu[static_cast<size_t>(attempt.gpu)];
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - attempt.start).count();
    const fs::path log = log_of(job, *end->run);
    const std::string& id = end->run->id;
    const int status = end->exit_status;
    if (end->signal != 0) {
      ++failed;
      fmt::print("[sweep] FAILED {}: killed by signal {} ({}){}  [log: {}]\n", id, end->signal, strsignal(end->signal),
                 end->signal == SIGKILL ? ", out of memory?" : "", log.string());
    } else if (status == 0) {
      ++finished;
      fmt::print("[sweep] finished {} in {:.1f} s\n", id, seconds);
    } else if (status == 128 + SIGINT || status == 128 + SIGTERM) {
      // `rlm train` stopped by SIGINT/SIGTERM (ours, or someone else's): checkpointed, so a rerun resumes it.
      ++stopped;
      fmt::print("[sweep] stopped {} (exit {}; its checkpoint is kept)\n", id, status);
    } else if (status == kExitRunInUse) {
      // Another process trains it (a second sweep on this folder, or a worker of an earlier one): left alone.
      ++busy;
      fmt::print("[sweep] not started {}: {}\n", id, last_error_line(log, attempt.log_offset));
    } else {
      ++failed;
      fmt::print("[sweep] FAILED {} (exit {}): {}  [log: {}]\n", id, status, last_error_line(log, attempt.log_offset),
                 log.string());
    }
    std::fflush(stdout);
  }
  const int stop = workers->stop_requested();
  workers.reset();  // the stop handlers as they were
  const int left = static_cast<int>(queue.size()) - finished - failed - busy;
  if (stop != 0) {
    fmt::print("[sweep] interrupted: {} finished, {} failed, {} left; rerun the same command to continue\n", finished,
               failed, left);
    return 128 + stop;
  }
  fmt::print("[sweep] {} of {}{} runs finished{}{}{}; collect with: rlm {} --collect\n", already + finished,
             last - first + 1, part.empty() ? "" : fmt::format(" (runs {} to {})", first, last),
             stopped ? fmt::format(", {} stopped (rerun the same command to resume them)", stopped) : "",
             busy ? fmt::format(", {} in use by another process (not touched)", busy) : "",
             failed ? fmt::format(", {} FAILED", failed) : "", shell_words(job.child_command));
  return failed || stopped || busy ? 1 : 0;
}

// ---- Slurm ----
/// `text` with control characters shown as \xNN, for a one-line message.
std::string printable(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  return out;
}

/// A path the batch script names: a control character would end its line and start a command, and in the #SBATCH
/// --output line a '%' is a Slurm pattern and a '"' would end the quoted value.
void check_script_path(const std::string& what, const fs::path& path, bool in_sbatch_line) {
  const std::string text = path.string();
  if (has_control_character(text))
    throw UsageError(
        fmt::format("{} '{}' holds a control character; a Slurm script cannot name it", what, printable(text)));
  if (in_sbatch_line && text.find_first_of("%\"") != std::string::npos)
    throw UsageError(fmt::format("{} '{}': '%' and '\"' cannot appear in a Slurm #SBATCH --output path", what, text));
}

/// The job array: task i trains run i, or, with `runs_per_gpu`, runs i·P to i·P + P − 1 at once, P = runs_per_gpu
/// times the task's GPUs (a task without GPUs: P = runs_per_gpu, placed on whatever GPUs it sees), as processes or,
/// `in_process`, as threads of the task's one.
void emit_slurm(const SweepJob& job, const fs::path& out_dir, int threads, int runs_per_gpu, bool in_process) {
  const auto& spec = job.spec;
  const auto& runs = job.runs;
  const fs::path& sweep_dir = job.dir;
  const auto& s = spec.slurm;
  const fs::path abs_sweep_dir = fs::absolute(sweep_dir).lexically_normal();
  check_script_path("--out", abs_sweep_dir, /*in_sbatch_line=*/true);
  check_script_path("the current folder", fs::current_path(), false);
  check_script_path("the rlm executable", self_executable(), false);
  check_script_path("--emit slurm", out_dir, false);
  // The values of #SBATCH lines: double-quoted when they hold spaces (sbatch reads quotes in its directives).
  const auto directive_value = [](const std::string& v) {
    return v.find_first_of(" \t") == std::string::npos ? v : "\"" + v + "\"";
  };
  const int per_task = runs_per_gpu > 0 ? runs_per_gpu * std::max(1, s.gpus) : 1;
  const size_t tasks = (runs.size() + static_cast<size_t>(per_task) - 1) / static_cast<size_t>(per_task);
  const std::string trains = per_task == 1
                                 ? "run i"
                                 : fmt::format("runs {0}i to {0}i + {1}, {0} at once ({2} on each of its GPUs),",
                                               per_task, per_task - 1, runs_per_gpu);
  std::string script = fmt::format(
      "#!/usr/bin/env bash\n"
      "# Slurm job array of the sweep '{}' ({} runs), written by `rlm {} --emit slurm`. Array task i trains\n"
      "# {} of the sweep (index, id and overrides: {}/sweep.json) into {}/runs/<id>;\n"
      "# resubmitting skips finished runs and resumes interrupted ones from their checkpoints. To stop a task\n"
      "# through a checkpoint: scancel --batch --signal=TERM JOB_TASK (rlm is the task's batch shell and it runs no\n"
      "# job steps, the only thing a plain scancel --signal reaches).\n"
      "#SBATCH --job-name={}\n"
      "#SBATCH --array=0-{}{}\n"
      "#SBATCH --output={}\n"
      "#SBATCH --cpus-per-task={}\n"
      "#SBATCH --signal=B:TERM@120\n",
      spec.name, runs.size(), job.child_command.front(), trains, abs_sweep_dir.string(), abs_sweep_dir.string(),
      spec.name, tasks - 1, s.concurrency > 0 ? fmt::format("%{}", s.concurrency) : "",
      directive_value(abs_sweep_dir.string() + "/logs/slurm-%A_%a.log"), s.cpus > 0 ? s.cpus : threads * per_task);
  if (!s.partition.empty()) script += "#SBATCH --partition=" + s.partition + "\n";
  if (!s.time.empty()) script += "#SBATCH --time=" + s.time + "\n";
  if (s.gpus > 0) script += fmt::format("#SBATCH --gres=gpu:{}\n", s.gpus);
  if (!s.mem.empty()) script += "#SBATCH --mem=" + s.mem + "\n";
  if (!s.account.empty()) script += "#SBATCH --account=" + s.account + "\n";
  for (const auto& e : s.extra) script += "#SBATCH " + e + "\n";
  script += fmt::format(
      "set -euo pipefail\n"
      "cd {}\n"
      "task=${{SLURM_ARRAY_TASK_ID:?run this with sbatch}}\n"
      "# --signal above: SIGTERM two minutes before the time limit, so the run checkpoints and a resubmission "
      "resumes.\n",
      quote(fs::current_path().string()));
  const std::string command = quote(self_executable().string()) + " " + shell_words(job.child_command);
  if (per_task == 1) {
    script += fmt::format("exec {} --only \"$task\"\n", command);
  } else {
    // The task's runs as local workers of one `rlm`, which passes the SIGTERM on to each of them.
    script += fmt::format("exec {0} --runs-per-gpu {1}{4} --only \"$((task * {2}))-$((task * {2} + {3}))\"\n", command,
                          runs_per_gpu, per_task, per_task - 1, in_process ? " --in-process" : "");
  }
  create_folders(out_dir, "--emit slurm folder");
  create_folders(sweep_dir / "logs", "sweep folder");
  write_file_atomic(sweep_dir / "sweep.json", manifest(spec, runs).dump(2));
  const fs::path file = out_dir / (spec.name + ".sbatch");
  write_file_atomic(file, script);
  fs::permissions(file, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  fmt::print("[sweep] wrote {} ({} array tasks{}); submit with: sbatch {}\n", file.string(), tasks,
             per_task == 1 ? "" : fmt::format(" of {} runs", per_task), file.string());
}

}  // namespace

std::string train_command_line(const sweep::SweepRun& run) {
  std::string out = "rlm train --config " + quote(run.config.string());
  for (const auto& o : run.overrides) {
    out += ' ';
    out += quote(o);
  }
  return out;
}

Args split_emit(const Args& raw, std::optional<fs::path>& emit_dir) {
  Args args;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != "--emit") {
      args.push_back(raw[i]);
      continue;
    }
    if (i + 2 >= raw.size()) throw UsageError("--emit needs a scheduler and a folder: --emit slurm DIR");
    if (raw[i + 1] != "slurm")
      throw UsageError(fmt::format("--emit {}: the only scheduler is slurm (--emit slurm DIR)", raw[i + 1]));
    emit_dir = raw[i + 2];
    i += 2;
  }
  return args;
}

std::optional<int> count_flag(const ParsedArgs& parsed, const char* name) {
  const auto v = parsed.get(name);
  if (!v) return std::nullopt;
  const auto n = parse_integer(*v);
  if (!n || *n < 0 || *n > 1'000'000) throw UsageError(fmt::format("--{} {}: not a count", name, *v));
  return static_cast<int>(*n);
}

void apply_slurm_flags(const ParsedArgs& parsed, sweep::SlurmOptions& slurm) {
  const auto value_of = [&](const char* name) -> std::optional<std::string> {
    auto v = parsed.get(name);
    if (!v) return std::nullopt;
    if (const auto problem = sweep::slurm_value_problem(name, *v))
      throw UsageError(fmt::format("--{} '{}' {}", name, printable(*v), *problem));
    return v;
  };
  if (const auto v = value_of("partition")) slurm.partition = *v;
  if (const auto v = value_of("time")) slurm.time = *v;
  if (const auto v = value_of("mem")) slurm.mem = *v;
  if (const auto v = value_of("account")) slurm.account = *v;
  if (const auto v = count_flag(parsed, "gpus")) slurm.gpus = *v;
  if (const auto v = count_flag(parsed, "cpus")) slurm.cpus = *v;
  if (const auto v = count_flag(parsed, "concurrency")) slurm.concurrency = *v;
}

std::vector<std::string> visible_gpus() {
  std::vector<std::string> gpus;
  if (const char* list = std::getenv("CUDA_VISIBLE_DEVICES"); list != nullptr) {
    std::istringstream entries(list);
    for (std::string entry; std::getline(entries, entry, ',');) {
      entry = config_reader::trim(entry);
      if (!entry.empty()) gpus.push_back(entry);
    }
    return gpus;
  }
  const int count = static_cast<int>(torch::cuda::device_count());
  for (int i = 0; i < count; ++i) gpus.push_back(std::to_string(i));
  return gpus;
}

int run_sweep_job(const SweepJob& job, const ParsedArgs& parsed, const std::optional<fs::path>& emit_dir) {
  const bool rerun_changed = parsed.has("rerun-changed");
  const auto runs_per_gpu = count_flag(parsed, "runs-per-gpu");
  if (runs_per_gpu && *runs_per_gpu < 1) throw UsageError("--runs-per-gpu must be at least 1");
  if (runs_per_gpu && parsed.has("jobs"))
    throw UsageError("--jobs and --runs-per-gpu both say how many runs train at once; give one of them");
  size_t first = 0, last = job.runs.size() - 1;
  if (const auto only = parsed.get("only")) {
    const OnlyRuns selected = parse_only(*only, job.runs.size());
    if (!selected.range) return run_one(job, static_cast<int>(selected.first), parsed.has("dry-run"), rerun_changed);
    if (emit_dir) throw UsageError("--only and --emit slurm: the array's tasks choose their runs; give one of them");
    first = selected.first;
    last = selected.last;
  }
  const std::span<const sweep::SweepRun> runs(job.runs.data() + first, last - first + 1);
  // Every run's config, then what the folder holds, before anything starts and before sweep.json claims new values
  // (or --rerun-changed empties a folder).
  const bool in_process = parsed.has("in-process");
  const bool trains_here = !emit_dir && !parsed.has("dry-run");
  const int threads = check_run_configs(job, in_process && trains_here ? runs : std::span<const sweep::SweepRun>{});
  if (!parsed.has("dry-run")) check_unchanged_runs(job, runs, rerun_changed);
  if (emit_dir) {
    emit_slurm(job, *emit_dir, threads, runs_per_gpu.value_or(0), in_process);
    return 0;
  }
  if (parsed.has("dry-run")) {
    for (const auto& run : runs) fmt::print("[{}] {}: {}\n", run.index, run.id, train_command_line(run));
    return 0;
  }
  Placement placement;
  if (runs_per_gpu) {
    placement.runs_per_gpu = *runs_per_gpu;
    placement.gpus = visible_gpus();
    if (placement.gpus.empty())
      throw UsageError(
          fmt::format("--runs-per-gpu {}: no GPU is visible (CUDA_VISIBLE_DEVICES is empty, or CUDA finds no device); "
                      "give --jobs N instead",
                      *runs_per_gpu));
  } else {
    placement.jobs = count_flag(parsed, "jobs").value_or(std::max(1, usable_cpus() / threads));
    if (placement.jobs < 1) throw UsageError("--jobs must be at least 1");
  }
  placement.in_process = in_process;
  return run_local(job, first, last, placement, rerun_changed);
}

}  // namespace rlm::app
