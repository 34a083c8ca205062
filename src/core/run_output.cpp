#include "core/run_output.hpp"

namespace rlm {
namespace {
thread_local std::FILE* t_run_output = nullptr;  // null: stdout (not a constant initialiser, so looked up per call)
}  // namespace

std::FILE* run_output() { return t_run_output != nullptr ? t_run_output : stdout; }

RunOutputScope::RunOutputScope(std::FILE* out) : previous_(t_run_output) { t_run_output = out; }

RunOutputScope::~RunOutputScope() { t_run_output = previous_; }

}  // namespace rlm
