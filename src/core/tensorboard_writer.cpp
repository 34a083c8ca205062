#include "core/tensorboard_writer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "core/atomic_file.hpp"

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
    key(field, 0);                         // wire type 0: varint
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

uint64_t get_le(std::string_view bytes, size_t offset, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[offset + i])) << (8 * i);
  return value;
}

bool read_varint(std::string_view bytes, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && pos < bytes.size(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes[pos++]);
    value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

/// The step of an encoded Event (0 when it has none, like the file-version record); nullopt if it does not parse.
std::optional<int64_t> event_step(std::string_view event) {
  int64_t step = 0;
  for (size_t pos = 0; pos < event.size();) {
    uint64_t key = 0, value = 0;
    if (!read_varint(event, pos, key)) return std::nullopt;
    switch (key & 7) {
      case 0:
        if (!read_varint(event, pos, value)) return std::nullopt;
        if ((key >> 3) == kEventStep) step = static_cast<int64_t>(value);
        break;
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2:
        if (!read_varint(event, pos, value) || value > event.size() - pos) return std::nullopt;
        pos += value;
        break;
      default:
        return std::nullopt;
    }
    if (pos > event.size()) return std::nullopt;
  }
  return step;
}

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

void TensorBoardWriter::truncate_after(const std::filesystem::path& log_dir, int64_t step) {
  std::error_code ec;
  if (!std::filesystem::is_directory(log_dir, ec)) return;
  for (const auto& entry : std::filesystem::directory_iterator(log_dir)) {
    if (!entry.path().filename().string().starts_with("events.out.tfevents.")) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string_view view(bytes);
    std::string kept;
    size_t pos = 0;
    while (pos + 12 <= view.size()) {  // a whole header: length and its checksum
      const uint64_t length = get_le(view, pos, 8);
      if (get_le(view, pos + 8, 4) != masked_crc32c(view.substr(pos, 8))) break;
      if (view.size() - pos < 16 || length > view.size() - pos - 16) break;  // cut short by a crash
      const std::string_view data = view.substr(pos + 12, length);
      if (get_le(view, pos + 12 + length, 4) != masked_crc32c(data)) break;
      const auto record_step = event_step(data);
      if (!record_step) break;
      if (*record_step <= step) kept.append(view.substr(pos, length + 16));
      pos += length + 16;
    }
    if (kept.size() != bytes.size()) write_file_atomic(entry.path(), kept);
  }
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
