// SIGINT and SIGTERM as a request to stop, for the processes that train (`rlm train`, a sweep's worker): the
// trainer polls stop_signal() at every env step and minibatch, checkpoints and returns, and the process exits with
// 128 + signal. A second signal kills at once, with two exceptions that are the same stop arriving twice:
// - the copy a sweep forwards to its workers (sender = the sweep, named by RLM_SWEEP_PARENT): a SIGTERM to the
//   sweep's process group, as timeout, systemd and Slurm send it, reaches a worker directly and through its sweep;
// - the parent-death signal a worker asks for, which the kernel sends in the dying sweep's name.
// The handlers go in first thing, before configs and torch load (src/app/main.cpp, from .preinit_array), so that an
// early SIGTERM gives exit 143 too.
// The signals are taken by one thread of their own and blocked in every other: a handler that ran on a compute thread
// would push its frame below that thread's stack pointer, and oneDNN's JIT f32 GEMM kernels point it into the heap
// while they run (uxlfoundation/oneDNN#4845, fixed by #4855 after the oneDNN of torch 2.11): a SIGTERM during a
// product corrupted the heap and crashed the stop about once in ten on an AVX-512 CPU.
#pragma once
#include <sys/types.h>

namespace rlm {

/// The environment variable through which a sweep tells its workers its pid.
inline constexpr const char* kSweepParentVariable = "RLM_SWEEP_PARENT";

/// Installs the SIGINT/SIGTERM handlers (idempotent: a request that came earlier is kept) and blocks both in the
/// calling thread, the process's first, so that every later thread has them blocked. A signal sent from now until
/// start_stop_signal_thread() waits (a sweep spawns its workers with them blocked, which closes the last window, the
/// few ms the dynamic loader takes).
void install_stop_handlers();
/// Starts the thread that takes SIGINT and SIGTERM (the only one with them unblocked); call once, from main. Nothing
/// when install_stop_handlers() did not run (the commands that do not train).
void start_stop_signal_thread();
/// 0 while no stop was asked for, else the first signal (SIGINT or SIGTERM).
int stop_signal();

/// For a sweep's worker, given RLM_SWEEP_PARENT's value (null or empty: not a worker, nothing to do; a Slurm task or
/// `--only` by hand): the sweep's forwarded signals are not a "second" one, and the worker gets SIGTERM when the
/// sweep dies, so that a kill -9 of the sweep stops it through a checkpoint instead of leaving an orphan training. If
/// the sweep is already gone, the stop is requested at once. Call after install_stop_handlers(); the value is passed
/// in because this runs from .preinit_array, before libc has set up getenv().
void stop_with_sweep_parent(const char* parent_pid);

}  // namespace rlm
