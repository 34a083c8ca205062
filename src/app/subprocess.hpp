// Running a helper program (plots, reference benchmarks) from an argument vector. No shell is involved, so a path
// holding quotes, spaces or `;` reaches the program as one argument and never runs as a command.
#pragma once
#include <string>
#include <vector>

namespace rlm::app {

struct ProcessOutput {
  bool discard_stdout = false;
  bool discard_stderr = false;
};

/// Starts argv[0] (looked up in PATH when it has no '/') with the arguments that follow, in this process's
/// environment with `set` ("NAME=value" entries) put over it. Returns its pid, or -1 when it could not start.
int start_process(const std::vector<std::string>& argv, ProcessOutput output = {},
                  const std::vector<std::string>& set = {});
/// Waits for a process start_process() started. Returns its exit status, 128 + signal when a signal ended it, or -1
/// for a pid of -1 (it never started).
int wait_process(int pid);
/// start_process, then wait_process.
int run_and_wait(const std::vector<std::string>& argv, ProcessOutput output = {});

/// This process's environment with `set` ("NAME=value" entries) put over it, for a program to be spawned.
std::vector<std::string> environment_with(const std::vector<std::string>& set);

/// `words` as posix_spawn's argv or envp: a pointer to each, then nullptr. Valid while `words` lives unchanged.
std::vector<char*> null_terminated(std::vector<std::string>& words);

}  // namespace rlm::app
