#include "core/tensorboard_writer.hpp"

#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

namespace rlm {
namespace {

// TFRecord checksums are CRC32C (Castagnoli), not zlib's CRC32. The Debian 12 packages that offer it (libcrcutil-dev:
// unmaintained since 2011, warns under -Wall, no CMake config; libisal-dev: a large storage-acceleration library)
// are not worth a system dependency for a 20-line table over a few hundred bytes per event.
constexpr std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);  // reflected polynomial
    table[i] = crc;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32cTable = make_crc32c_table();

uint32_t crc32c(std::string_view bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char byte : bytes) crc = kCrc32cTable[(crc ^ byte) & 0xFFu] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

// TFRecord masks its checksums so that a CRC of data that itself contains CRCs stays well distributed.
uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

// The Event protobuf is encoded by hand: we need 5 fields of tensorflow/core/util/event.proto and summary.proto,
// and this avoids vendoring TensorFlow's .proto files and a protoc build step for them.
class ProtoWriter {
 public:
  void varint(uint64_t value) {
    while (value >= 0x80) {
      bytes_.push_back(static_cast<char>((value & 0x7F) | 0x80));
      value >>= 7;
    }
    bytes_.push_back(static_cast<char>(value));
  }
  void key(uint32_t field, uint32_t wire_type) { varint((field << 3) | wire_type); }

  void double_field(uint32_t field, double value) {
    key(field, 1);  // wire type 1: 64-bit
    fixed(std::bit_cast<uint64_t>(value));
  }
  void float_field(uint32_t field, float value) {
    key(field, 5);  // wire type 5: 32-bit
    fixed(std::bit_cast<uint32_t>(value));
  }
  void int64_field(uint32_t field, int64_t value) {
    key(field, 0);                          // wire type 0: varint
    varint(static_cast<uint64_t>(value));  // int64 (not sint64): negatives are 10-byte two's complement
  }
  void bytes_field(uint32_t field, std::string_view value) {
    key(field, 2);  // wire type 2: length-delimited (strings and sub-messages)
    varint(value.size());
    bytes_.append(value);
  }

  const std::string& bytes() const { return bytes_; }

 private:
  template <typename T>
  void fixed(T value) {
    for (size_t i = 0; i < sizeof(T); ++i) bytes_.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  }

  std::string bytes_;
};

// Field numbers from event.proto (Event) and summary.proto (Summary, Summary.Value).
constexpr uint32_t kEventWallTime = 1;
constexpr uint32_t kEventStep = 2;
constexpr uint32_t kEventFileVersion = 3;
constexpr uint32_t kEventSummary = 5;
constexpr uint32_t kSummaryValue = 1;
constexpr uint32_t kValueTag = 1;
constexpr uint32_t kValueSimpleValue = 2;

std::string hostname() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  return name.data();
}

}  // namespace

double TensorBoardWriter::now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TensorBoardWriter::TensorBoardWriter(const std::filesystem::path& log_dir) {
  std::error_code ec;
  std::filesystem::create_directories(log_dir, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create '{}': {}", log_dir.string(), ec.message()));

  const double start = now();
  const std::string base = fmt::format("events.out.tfevents.{}.{}", static_cast<int64_t>(start), hostname());
  for (int suffix = 0; !file_; ++suffix) {
    path_ = log_dir / (suffix == 0 ? base : fmt::format("{}.{}", base, suffix));
    file_.reset(std::fopen(path_.c_str(), "wbx"));  // "x": fail instead of clobbering another writer's file
    if (!file_ && (errno != EEXIST || suffix >= 1000))
      throw std::runtime_error(fmt::format("cannot create '{}': {}", path_.string(), std::strerror(errno)));
  }

  // Readers identify the format by this first record.
  ProtoWriter event;
  event.double_field(kEventWallTime, start);
  event.bytes_field(kEventFileVersion, "brain.Event:2");
  write_record(event.bytes());
  flush();
}

void TensorBoardWriter::add_scalar(const std::string& tag, double value, int64_t step, double wall_time) {
  ProtoWriter summary_value;
  summary_value.bytes_field(kValueTag, tag);
  summary_value.float_field(kValueSimpleValue, static_cast<float>(value));
  ProtoWriter summary;
  summary.bytes_field(kSummaryValue, summary_value.bytes());
  ProtoWriter event;
  event.double_field(kEventWallTime, wall_time);
  event.int64_field(kEventStep, step);
  event.bytes_field(kEventSummary, summary.bytes());
  write_record(event.bytes());
  flush();
}

void TensorBoardWriter::flush() {
  if (std::fflush(file_.get()) != 0)
    throw std::runtime_error(fmt::format("cannot write '{}': {}", path_.string(), std::strerror(errno)));
}

// TFRecord framing: uint64 length, masked crc32c of those 8 bytes, data, masked crc32c of data (all little-endian).
void TensorBoardWriter::write_record(std::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  const auto put_le = [&record](uint64_t value, size_t size) {
    for (size_t i = 0; i < size; ++i) record.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  };
  put_le(data.size(), 8);
  put_le(masked_crc32c(record), 4);
  record.append(data);
  put_le(masked_crc32c(data), 4);
  if (std::fwrite(record.data(), 1, record.size(), file_.get()) != record.size())
    throw std::runtime_error(fmt::format("cannot write '{}': {}", path_.string(), std::strerror(errno)));
}

}  // namespace rlm
