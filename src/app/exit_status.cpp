#include "app/exit_status.hpp"

#include <c10/util/Exception.h>

#include <cstring>
#include <new>

#include "core/error.hpp"

namespace rlm::app {
namespace {

int report(std::FILE* out, const char* message, int code) noexcept {
  std::fprintf(out, "rlm: error: %.*s\n", static_cast<int>(std::strcspn(message, "\n")), message);
  std::fflush(out);
  return code;
}

}  // namespace

int report_exception(const std::exception_ptr& error, std::FILE* out) noexcept {
  try {
    std::rethrow_exception(error);
  } catch (const UsageError& e) {
    return report(out, e.what(), 2);
  } catch (const EnvError& e) {
    return report(out, e.what(), 2);
  } catch (const CheckpointError& e) {
    return report(out, e.what(), 3);
  } catch (const DivergenceError& e) {
    return report(out, e.what(), 4);
  } catch (const std::bad_alloc&) {
    return report(
        out,
        "out of memory (reduce env.num_envs, algo.ppo.steps_per_env, algo.off_policy.batch_size or the model's sizes)",
        1);
  } catch (const c10::Error& e) {
    return report(out, e.what_without_backtrace(), 1);
  } catch (const std::exception& e) {
    return report(out, e.what(), 1);
  } catch (...) {
    return report(out, "an unknown error", 1);
  }
}

}  // namespace rlm::app
