// A checkpoint's bytes wrapped in a small checked container, so a truncated or corrupt file is reported as such
// (rlm::CheckpointError, one line) instead of crashing or silently loading garbage in the deserialiser.
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace rlm {

/// Layout (little-endian): 8-byte magic "RLMCKPT1", uint64 payload size, uint32 zlib crc32 of the payload, payload.
/// Written with write_file_atomic, so `path` holds either the old file or the complete new one.
void write_checkpoint_file(const std::filesystem::path& path, std::string_view payload);

/// The payload written by write_checkpoint_file. Throws rlm::CheckpointError when the file is missing, is not an
/// rlm checkpoint, is truncated or fails its checksum.
std::string read_checkpoint_file(const std::filesystem::path& path);

}  // namespace rlm
