#include "core/checkpoint_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace rlm {
namespace {

constexpr std::string_view kMagic = "RLMCKPT1";
constexpr size_t kSizeOffset = 8;
constexpr size_t kCrcOffset = 16;
constexpr size_t kHeaderSize = 20;

// Explicit byte order: a checkpoint written on one machine must read back on any other.
template <typename T>
void put_le(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

template <typename T>
T get_le(std::string_view bytes, size_t offset) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i)
    value |= static_cast<T>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return value;
}

uint32_t payload_crc(std::string_view payload) {
  // crc32_z takes a size_t length; plain crc32 would cap at 4 GiB.
  return static_cast<uint32_t>(
      crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(payload.data()), payload.size()));
}

}  // namespace

void write_checkpoint_file(const std::filesystem::path& path, std::string_view payload) {
  std::string bytes;
  bytes.reserve(kHeaderSize + payload.size());
  bytes.append(kMagic);
  put_le<uint64_t>(bytes, payload.size());
  put_le<uint32_t>(bytes, payload_crc(payload));
  bytes.append(payload);
  write_file_atomic(path, bytes);
}

std::string read_checkpoint_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw CheckpointError(fmt::format("checkpoint '{}' not found", name));
  if (std::filesystem::is_directory(path, ec))
    throw CheckpointError(fmt::format("'{}' is not an rlm checkpoint (it is a folder)", name));

  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw CheckpointError(fmt::format("cannot open checkpoint '{}': {}", name, std::generic_category().message(errno)));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw CheckpointError(fmt::format("cannot read checkpoint '{}'", name));

  // A file cut inside the magic still starts like one of ours: call that truncated, anything else foreign.
  const size_t magic_seen = std::min(bytes.size(), kMagic.size());
  if (std::string_view(bytes).substr(0, magic_seen) != kMagic.substr(0, magic_seen))
    throw CheckpointError(fmt::format("'{}' is not an rlm checkpoint (bad magic)", name));
  if (bytes.size() < kHeaderSize) {
    throw CheckpointError(
        fmt::format("checkpoint '{}' is truncated (header needs {} bytes, found {})", name, kHeaderSize, bytes.size()));
  }

  const std::string_view view(bytes);
  const uint64_t expected = get_le<uint64_t>(view, kSizeOffset);
  const uint32_t crc = get_le<uint32_t>(view, kCrcOffset);
  const uint64_t found = bytes.size() - kHeaderSize;
  if (found < expected) {
    throw CheckpointError(
        fmt::format("checkpoint '{}' is truncated (expected {} bytes of payload, found {})", name, expected, found));
  }
  if (found > expected) {
    throw CheckpointError(
        fmt::format("checkpoint '{}' is corrupt ({} unexpected bytes after the payload)", name, found - expected));
  }
  if (payload_crc(view.substr(kHeaderSize)) != crc)
    throw CheckpointError(fmt::format("checkpoint '{}' is corrupt (checksum mismatch)", name));
  bytes.erase(0, kHeaderSize);
  return bytes;
}

}  // namespace rlm
