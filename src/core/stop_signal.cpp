#include "core/stop_signal.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <string>

namespace rlm {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_sweep_parent = 0;  // pid_t fits: Linux pids are below 2^22

extern "C" void on_stop_signal(int signal, siginfo_t* info, void*) {
  if (g_stop_signal == 0) {
    g_stop_signal = signal;
    return;
  }
  const bool from_sweep = g_sweep_parent != 0 && info != nullptr && info->si_code == SI_USER &&
                          info->si_pid == static_cast<pid_t>(g_sweep_parent);
  if (from_sweep) return;  // the same stop, forwarded (see the header)
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_sigaction = on_stop_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A sweep starts its workers with both blocked, so that one sent before this point waits for the handler.
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &stops, nullptr);
}

int stop_signal() { return g_stop_signal; }

void stop_with_sweep_parent(const char* parent_pid) {
  if (parent_pid == nullptr || *parent_pid == '\0') return;
  const long parent = std::strtol(parent_pid, nullptr, 10);
  if (parent <= 1) return;
  g_sweep_parent = static_cast<std::sig_atomic_t>(parent);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The sweep may have died between spawning this process and the prctl: then nobody will send the signal.
  if (getppid() != static_cast<pid_t>(parent)) std::raise(SIGTERM);
}

}  // namespace rlm
