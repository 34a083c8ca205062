#include "core/run_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace rlm {

RunFolderLock::RunFolderLock(const std::filesystem::path& run_dir) {
  const std::filesystem::path path = run_dir / ".lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw UsageError(fmt::format("cannot lock run folder '{}': {}", run_dir.string(), std::strerror(errno)));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {};
    const ssize_t n = ::pread(fd_, pid, sizeof(pid) - 1, 0);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK) {
      const std::string holder = n > 0 ? std::string(pid, static_cast<size_t>(n)) : "";
      throw RunFolderInUse(fmt::format("run folder '{}' is in use by another rlm process{}; wait for it to finish or "
                                       "stop it first",
                                       run_dir.string(), holder.empty() ? "" : fmt::format(" (pid {})", holder)),
                           holder);
    }
    throw UsageError(fmt::format("cannot lock run folder '{}': {}", run_dir.string(), std::strerror(err)));
  }
  // The holder's pid, for the message a second process prints; informational only (the lock is the flock).
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // A read-only or full disk: the lock still holds, only the message loses the pid.
  }
}

RunFolderLock::~RunFolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace rlm
