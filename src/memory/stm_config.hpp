// The STM backend's options (YAML section model.memory.stm), beside the backend (memory/stm.hpp); the registry
// (memory/registry.cpp) hands them to it.
#pragma once
#include <string>

#include "core/config_schema.hpp"

namespace rlm {

/// STM options (model.memory.stm; stm.md, src/memory/stm.hpp). The output width is model.memory.hidden_size.
struct StmConfig {
  /// d: the item memory is d×d, each relational slot d×d (stm.md §6: 96).
  int item_size = 96;
  /// nq = nkv: queries, relational slots and key/value pairs (stm.md §6: 8).
  int num_slots = 8;
  /// nr: per-slot width after G2 (stm.md §3.1: 96).
  int rel_size = 96;
  /// Carry the relational memory across steps (stm.md §3.3 full model); false reproduces the Atari code.
  bool carry_relational = true;
  /// Gated item-memory write (the code's rd = true); false is the "no gates" ablation.
  bool gated = true;
  /// SAM projection LayerNorm (stm.md §3.2, D6): matrix (stm_basic), row (the Atari code), vector (the paper).
  std::string qkv_norm = "matrix";

  template <class V>
  void visit(V& v) {
    v.field("item_size", item_size, in_range(1, kMaxWidth));
    v.field("num_slots", num_slots, in_range(1, kMaxWidth));
    v.field("rel_size", rel_size, in_range(1, kMaxWidth));
    v.field("carry_relational", carry_relational);
    v.field("gated", gated);
    v.field("qkv_norm", qkv_norm, one_of({"matrix", "row", "vector"}));
  }
  bool operator==(const StmConfig&) const = default;
};

}  // namespace rlm
