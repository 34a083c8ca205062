#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>

namespace rlm {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* action, int err) {
  throw std::runtime_error(
      fmt::format("cannot write '{}': {} failed: {}", path.string(), action, std::generic_category().message(err)));
}

/// The temp file name of a write to `target`: ".<name>.tmp.<pid>.<counter>". pid + counter make it unique across
/// processes and threads; remove_interrupted_atomic_writes recognises the pattern.
std::filesystem::path temp_name(const std::filesystem::path& target, unsigned counter) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  return dir / fmt::format(".{}.tmp.{}.{}", target.filename().string(), ::getpid(), counter);
}

bool is_temp_name(const std::string& name) { return name.starts_with('.') && name.find(".tmp.") != std::string::npos; }

// Closes the descriptor and removes the temp file unless the rename succeeded, so every early exit (including
// exceptions) cleans up after itself.
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& target) {
    static std::atomic<unsigned> counter{0};
    // O_EXCL guards against stale leftovers of an earlier process with the same pid.
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = temp_name(target, counter++);
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST) fail(target, "creating a temp file", errno);
    }
    fail(target, "creating a temp file", EEXIST);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!renamed_) ::unlink(path_.c_str());
  }

  int fd() const { return fd_; }
  const std::filesystem::path& path() const { return path_; }
  int close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }
  void mark_renamed() { renamed_ = true; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool renamed_ = false;
};

void write_all(int fd, std::string_view bytes, const std::filesystem::path& target) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(target, "write", errno);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

void fsync_folder(const std::filesystem::path& dir, const std::filesystem::path& target) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail(target, "opening its folder", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // EINVAL: the filesystem cannot sync folders (some network and FUSE mounts); the rename is done regardless.
  if (rc != 0 && err != EINVAL) fail(target, "fsync of its folder", err);
}

}  // namespace

int remove_interrupted_atomic_writes(const std::filesystem::path& folder) {
  int removed = 0;
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec)) return 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (is_temp_name(entry.path().filename().string()) && entry.is_regular_file(ec) &&
        std::filesystem::remove(entry.path(), ec)) {
      ++removed;
    }
  }
  return removed;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  TempFile temp(path);
  write_all(temp.fd(), bytes, path);
  if (::fsync(temp.fd()) != 0) fail(path, "fsync", errno);
  if (temp.close() != 0) fail(path, "close", errno);
  if (::rename(temp.path().c_str(), path.c_str()) != 0) fail(path, "rename", errno);
  temp.mark_renamed();
  fsync_folder(path.has_parent_path() ? path.parent_path() : ".", path);
}

}  // namespace rlm
