#include "app/subprocess.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <string_view>

extern char** environ;

namespace rlm::app {

std::vector<char*> null_terminated(std::vector<std::string>& words) {
  std::vector<char*> pointers;
  pointers.reserve(words.size() + 1);
  for (auto& w : words) pointers.push_back(w.data());
  pointers.push_back(nullptr);
  return pointers;
}

std::vector<std::string> environment_with(const std::vector<std::string>& set) {
  std::vector<std::string> environment = set;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto overridden = [&](const std::string& s) { return entry.starts_with(s.substr(0, s.find('=') + 1)); };
    if (std::none_of(set.begin(), set.end(), overridden)) environment.emplace_back(entry);
  }
  return environment;
}

int start_process(const std::vector<std::string>& argv_strings, ProcessOutput output,
                  const std::vector<std::string>& set) {
  if (argv_strings.empty()) return -1;
  std::vector<std::string> words = argv_strings;
  std::vector<char*> argv = null_terminated(words);
  std::vector<std::string> environment = environment_with(set);
  std::vector<char*> envp = null_terminated(environment);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (output.discard_stdout) posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  if (output.discard_stderr) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  // No signal blocked in the program, whatever this thread blocks (core/stop_signal.hpp blocks SIGINT and SIGTERM).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  return rc == 0 ? static_cast<int>(pid) : -1;
}

int wait_process(int pid) {
  if (pid < 0) return -1;
  int status = 0;
  while (waitpid(static_cast<pid_t>(pid), &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

int run_and_wait(const std::vector<std::string>& argv, ProcessOutput output) {
  return wait_process(start_process(argv, output));
}

}  // namespace rlm::app
