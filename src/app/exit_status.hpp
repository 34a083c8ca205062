// The exit status and the one `rlm: error:` line of an exception that ends a command, or a run trained on a thread of
// a sweep (`--in-process`), which reports as a worker process would: 2 usage, config or env error; 3 checkpoint
// error; 4 divergence; 1 anything else (out of memory, a torch error).
#pragma once
#include <cstdio>
#include <exception>

namespace rlm::app {

/// Writes "rlm: error: " and the first line of `error`'s message to `out` and returns its exit status. Plain C stdio,
/// so that reporting cannot throw a second exception (a bad_alloc while formatting would end in std::terminate).
int report_exception(const std::exception_ptr& error, std::FILE* out) noexcept;

}  // namespace rlm::app
