#include "nn/op_counter.hpp"

#include <ATen/record_function.h>

#include <atomic>
#include <memory>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace rlm::nn {
namespace {

std::atomic<int64_t> g_count = 0;
// Per thread: for each operator now running, whether another one ran inside it.
thread_local std::vector<bool> t_had_inner;

/// Operators that make a view, read metadata or allocate without writing: no kernel of their own.
bool launches_nothing(std::string_view name) {
  static const std::unordered_set<std::string_view> names = {
      "aten::view",
      "aten::_unsafe_view",
      "aten::_reshape_alias",
      "aten::reshape",
      "aten::as_strided",
      "aten::expand",
      "aten::expand_as",
      "aten::select",
      "aten::slice",
      "aten::narrow",
      "aten::squeeze",
      "aten::unsqueeze",
      "aten::t",
      "aten::transpose",
      "aten::permute",
      "aten::split",
      "aten::chunk",
      "aten::unbind",
      "aten::unfold",
      "aten::view_as",
      "aten::detach",
      "aten::detach_",
      "aten::alias",
      "aten::lift_fresh",
      "aten::empty",
      "aten::empty_like",
      "aten::empty_strided",
      "aten::resize_",
      "aten::set_",
      "aten::contiguous",
      "aten::to",
      "aten::_to_copy_view",
      "aten::resolve_conj",
      "aten::resolve_neg",
      "aten::result_type",
      "aten::numpy_T",
      "aten::flatten",
      "aten::movedim",
      "aten::diagonal",
      "aten::indices",
      "aten::split_with_sizes",
      "aten::unflatten",
      "aten::_has_compatible_shallow_copy_type",
  };
  return names.contains(name);
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) {
  if (!t_had_inner.empty()) t_had_inner.back() = true;
  t_had_inner.push_back(false);
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (t_had_inner.empty()) return;  // began before the counter
  const bool leaf = !t_had_inner.back();
  t_had_inner.pop_back();
  if (leaf && !launches_nothing(fn.name())) ++g_count;
}

}  // namespace

OpCounter::OpCounter()
    : handle_(at::addGlobalCallback(
          at::RecordFunctionCallback(on_start, on_end).needsInputs(false).scopes({at::RecordScope::FUNCTION}))) {
  g_count = 0;
}

OpCounter::~OpCounter() { at::removeCallback(handle_); }

int64_t OpCounter::count() const { return g_count; }

void OpCounter::reset() { g_count = 0; }

}  // namespace rlm::nn
