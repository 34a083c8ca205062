#include "core/stop_signal.hpp"

#include <pthread.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

namespace rlm {
namespace {

// Written by the signal thread's handler, read by the training thread: lock-free atomics, safe in a handler.
std::atomic<int> g_stop_signal = 0;
std::atomic<int> g_sweep_parent = 0;  // pid_t fits: Linux pids are below 2^22
static_assert(std::atomic<int>::is_always_lock_free);
bool g_installed = false;  // install_stop_handlers() ran (only the commands that train call it)

extern "C" void on_stop_signal(int signal, siginfo_t* info, void*) {
  if (g_stop_signal == 0) {
    g_stop_signal = signal;
    return;
  }
  const bool from_sweep = g_sweep_parent != 0 && info != nullptr && info->si_code == SI_USER &&
                          info->si_pid == static_cast<pid_t>(g_sweep_parent);
  if (from_sweep) return;  // the same stop, forwarded (see the header)
  std::signal(signal, SIG_DFL);
  std::raise(
      signal);  // to this thread, the signal thread, where it is not blocked: the default action ends the process
}

sigset_t stop_signals() {
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  return stops;
}

}  // namespace

void install_stop_handlers() {
  g_installed = true;
  struct sigaction action {};
  action.sa_sigaction = on_stop_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // Blocked here, in the first thread, so that every thread started later (torch's pools, the env workers) has them
  // blocked too; start_stop_signal_thread() starts the one thread that takes them. A sweep starts its workers with
  // both blocked already, so one sent before this point waits as well.
  const sigset_t stops = stop_signals();
  sigprocmask(SIG_BLOCK, &stops, nullptr);
}

void start_stop_signal_thread() {
  if (!g_installed) return;
  std::thread([] {
    const sigset_t stops = stop_signals();
    pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);  // a signal pending since start-up is handled now
    for (;;) pause();
  }).detach();
}

int stop_signal() { return g_stop_signal; }

void stop_with_sweep_parent(const char* parent_pid) {
  if (parent_pid == nullptr || *parent_pid == '\0') return;
  const long parent = std::strtol(parent_pid, nullptr, 10);
  if (parent <= 1) return;
  g_sweep_parent = static_cast<int>(parent);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The sweep may have died between spawning this process and the prctl: then nobody will send the signal. (Not
  // raise(): it would be pending on this thread, which blocks it for good.)
  if (getppid() != static_cast<pid_t>(parent) && g_stop_signal == 0) g_stop_signal = SIGTERM;
}

}  // namespace rlm
