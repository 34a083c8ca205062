// The checkpoint container must turn every damaged file into a one-line CheckpointError, never a crash or garbage.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/checkpoint_file.hpp"
#include "core/error.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    const std::string name = "rlm_test_ckpt_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    path = fs::temp_directory_path() / name;
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Payload with every byte value, NULs included, so nothing in the container treats it as text.
std::string test_payload(size_t size) {
  std::string payload(size, '\0');
  for (size_t i = 0; i < size; ++i) payload[i] = static_cast<char>((i * 131 + 7) % 256);
  return payload;
}

std::string checkpoint_error_of(const fs::path& path) {
  try {
    (void)rlm::read_checkpoint_file(path);
  } catch (const rlm::CheckpointError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("checkpoint file round-trips any payload", "[checkpoint]") {
  TempDir dir;
  const fs::path path = dir.path / "ckpt.bin";
  for (size_t size : {size_t{0}, size_t{1}, size_t{1000}, size_t{1} << 20}) {
    const std::string payload = test_payload(size);
    rlm::write_checkpoint_file(path, payload);
    CHECK(fs::file_size(path) == 20 + size);
    CHECK(rlm::read_checkpoint_file(path) == payload);
  }
  CHECK(read_bytes(path).substr(0, 8) == "RLMCKPT1");
  // Only the checkpoint itself is left: the atomic write cleaned up its temp file.
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
}

TEST_CASE("checkpoint file cut anywhere reports truncation", "[checkpoint]") {
  TempDir dir;
  const fs::path good = dir.path / "good.bin";
  const fs::path cut = dir.path / "cut.bin";
  rlm::write_checkpoint_file(good, test_payload(1000));
  const std::string bytes = read_bytes(good);
  for (size_t keep : {0, 1, 7, 8, 12, 16, 19, 20, 21, 500, 1019}) {
    INFO("kept " << keep << " of " << bytes.size() << " bytes");
    write_bytes(cut, bytes.substr(0, keep));
    const std::string message = checkpoint_error_of(cut);
    CHECK_THAT(message, Catch::Contains("truncated") && Catch::Contains(cut.string()));
  }
  write_bytes(cut, bytes.substr(0, 520));
  CHECK(checkpoint_error_of(cut) ==
        fmt::format("checkpoint '{}' is truncated (expected 1000 bytes of payload, found 500)", cut.string()));
}

TEST_CASE("checkpoint file with damaged bytes reports corruption", "[checkpoint]") {
  TempDir dir;
  const fs::path path = dir.path / "ckpt.bin";
  rlm::write_checkpoint_file(path, test_payload(1000));
  const std::string bytes = read_bytes(path);

  SECTION("flipped payload byte") {
    for (size_t at : {20, 21, 517, 1019}) {
      std::string damaged = bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
      write_bytes(path, damaged);
      CHECK(checkpoint_error_of(path) == fmt::format("checkpoint '{}' is corrupt (checksum mismatch)", path.string()));
    }
  }
  SECTION("flipped checksum byte") {
    std::string damaged = bytes;
    damaged[17] = static_cast<char>(damaged[17] ^ 0x01);
    write_bytes(path, damaged);
    CHECK_THAT(checkpoint_error_of(path), Catch::Contains("corrupt (checksum mismatch)"));
  }
  SECTION("size field claims more than the file holds") {
    std::string damaged = bytes;
    damaged[15] = static_cast<char>(0x7F);  // most significant byte of the uint64 size
    write_bytes(path, damaged);
    CHECK_THAT(checkpoint_error_of(path), Catch::Contains("truncated"));
  }
  SECTION("bytes appended after the payload") {
    write_bytes(path, bytes + "extra");
    CHECK_THAT(checkpoint_error_of(path), Catch::Contains("corrupt"));
  }
}

TEST_CASE("checkpoint file rejects foreign and missing files", "[checkpoint]") {
  TempDir dir;
  const fs::path path = dir.path / "ckpt.bin";

  write_bytes(path, "PK\x03\x04 this is a zip archive, not an rlm checkpoint");
  CHECK(checkpoint_error_of(path) == fmt::format("'{}' is not an rlm checkpoint (bad magic)", path.string()));
  write_bytes(path, "RLMCKPT2" + std::string(30, '\0'));
  CHECK_THAT(checkpoint_error_of(path), Catch::Contains("bad magic"));
  write_bytes(path, "RLX");  // short and already wrong: foreign, not truncated
  CHECK_THAT(checkpoint_error_of(path), Catch::Contains("bad magic"));

  const fs::path missing = dir.path / "nope" / "ckpt.bin";
  CHECK(checkpoint_error_of(missing) == fmt::format("checkpoint '{}' not found", missing.string()));
  CHECK_THAT(checkpoint_error_of(dir.path), Catch::Contains("not an rlm checkpoint"));
}
