// Creating the folders a command writes into (run folders, sweep folders, emitted scripts), with an error a user can
// act on: a path given on the command line or in a config is user input, so its failure is exit 2, not a raw
// filesystem_error.
#pragma once
#include <filesystem>
#include <string_view>

namespace rlm {

/// Creates `folder` and its parents (nothing to do when it exists). Throws UsageError naming `what`, the path and
/// the reason ("'runs/x' is a file, not a folder", "File name too long", "Permission denied").
void create_folders(const std::filesystem::path& folder, std::string_view what);

}  // namespace rlm
