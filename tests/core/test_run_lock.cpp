// One writer per run folder: a second lock on a folder in use is refused with a clear message, and the lock is
// released when its holder goes away (closing the descriptor, as the kernel does when a process dies).
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "core/run_lock.hpp"

namespace fs = std::filesystem;

TEST_CASE("a run folder has one writer at a time", "[run_lock]") {
  const fs::path dir = fs::temp_directory_path() / ("rlm-lock-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    std::optional<rlm::RunFolderLock> first(std::in_place, dir);
    try {
      rlm::RunFolderLock second(dir);
      FAIL("the second lock was granted");
    } catch (const rlm::UsageError& e) {
      CHECK_THAT(std::string(e.what()),
                 Catch::Contains("is in use by another rlm process (pid " + std::to_string(::getpid()) + ")"));
    }
    // Another process is refused too, and a process killed while holding the lock releases it.
    const pid_t child = ::fork();
    if (child == 0) {
      try {
        rlm::RunFolderLock other(dir);
        ::_exit(1);
      } catch (const rlm::UsageError&) {
        ::_exit(0);
      }
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    first.reset();
  }
  CHECK_NOTHROW(rlm::RunFolderLock(dir));
  const pid_t holder = ::fork();
  if (holder == 0) {
    rlm::RunFolderLock held(dir);
    ::pause();  // killed below while holding the lock
    ::_exit(0);
  }
  ::usleep(200'000);
  CHECK_THROWS_AS(rlm::RunFolderLock(dir), rlm::UsageError);
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  CHECK_NOTHROW(rlm::RunFolderLock(dir));
  fs::remove_all(dir);
}
