// Run files (checkpoints, metrics rewritten on resume, eval.json) must never be seen half-written: a crash or a
// full disk mid-write would otherwise leave a file that looks valid to the next `rlm train --resume`.
#pragma once
#include <filesystem>
#include <string_view>

namespace rlm {

/// Replaces `path` with exactly `bytes`, or leaves it untouched. Writes a temp file next to `path` (rename is only
/// atomic within one filesystem), fsyncs it, renames it over `path` and fsyncs the folder so the rename itself
/// survives a power cut. On any failure the temp file is removed and std::runtime_error names the path and errno.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

/// Deletes the temp files that write_file_atomic calls in `folder` left behind when their process was killed, and
/// returns how many. Only safe while no other process writes into `folder` (a run holds its RunFolderLock).
int remove_interrupted_atomic_writes(const std::filesystem::path& folder);

}  // namespace rlm
