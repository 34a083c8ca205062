// The STM backend's options (YAML section model.memory.stm), beside the backend (memory/stm.hpp), which reads this
// struct itself (StmOptions extends it with the widths and the other choices): an option is added here and used
// there, nowhere else.
#pragma once
#include "core/config_schema.hpp"

namespace rlm {

/// STM options (model.memory.stm; docs/models/stm.md, src/memory/stm.hpp). The output width is
/// model.memory.hidden_size.
struct StmConfig {
  /// SAM projection LayerNorm (SAM paper Eqs. 4–6; the code's qkv_layernorm).
  enum class QkvNorm {
    kMatrix,  ///< (a) stm_basic: one LayerNorm over the whole [d, 3nq] projection, affine [d, 3nq] (our default)
    kRow,     ///< (b) stm_rl (Atari code): LayerNorm over 3nq for each of the d rows, affine [3nq]
    kVector,  ///< (c) paper: LayerNorm of each query/key/value vector over d, one affine [d] each for Q, K and V
  };
  /// d: the item memory is d×d, each relational slot d×d (SAM paper App. F, App. I: 96).
  int item_size = 96;
  /// nq = nkv: queries, relational slots and key/value pairs (SAM paper §2.3; App. F, App. I: 8).
  int num_slots = 8;
  /// nr: per-slot width after G2 (SAM paper Eq. 14; App. F, App. I: 96).
  int rel_size = 96;
  /// Carry the relational memory across steps (SAM paper Eq. 12); false reproduces the Atari code (a3c.py).
  bool carry_relational = true;
  /// Gated item-memory write (the code's rd = true); false is the "no gates" ablation.
  bool gated = true;
  /// SAM projection LayerNorm: matrix (stm_basic.py), row (stm_rl.py, the Atari code), vector (the paper).
  QkvNorm qkv_norm = QkvNorm::kMatrix;

  template <class V>
  void visit(V& v) {
    v.field("item_size", item_size, in_range(1, kMaxWidth));
    v.field("num_slots", num_slots, in_range(1, kMaxWidth));
    v.field("rel_size", rel_size, in_range(1, kMaxWidth));
    v.field("carry_relational", carry_relational);
    v.field("gated", gated);
    v.field("qkv_norm", qkv_norm,
            named<QkvNorm>({{"matrix", QkvNorm::kMatrix}, {"row", QkvNorm::kRow}, {"vector", QkvNorm::kVector}}));
  }
  bool operator==(const StmConfig&) const = default;
};

}  // namespace rlm
