// The memory options (YAML section model.memory, and per network model.actor_memory / model.critic_memory): which
// backend, its width, and each backend's own section (memory/<backend>_config.hpp).
#pragma once
#include <string>

#include "core/config_schema.hpp"
#include "memory/ffm_config.hpp"
#include "memory/kf_config.hpp"
#include "memory/shm_config.hpp"
#include "memory/spiking_config.hpp"
#include "memory/stm_config.hpp"

namespace rlm {

/// Memory backends a config may name (model.memory.type). Extend as backends are registered in src/memory.
inline const Choices kMemoryTypes = one_of({"ffm", "gru", "kf", "shm", "spiking", "stm"});
/// model.actor_memory / model.critic_memory may also say "same": use model.memory as it is.
inline const Choices kMemoryTypesOrSame = one_of({"same", "ffm", "gru", "kf", "shm", "spiking", "stm"});

struct MemoryConfig {
  MemoryConfig() = default;
  /// A per-network memory section (model.actor_memory, model.critic_memory): its type defaults to "same".
  static MemoryConfig same_as_model() {
    MemoryConfig c;
    c.type = "same";
    c.per_network = true;
    return c;
  }
  /// Memory backend (one of kMemoryTypes; "same" in a per-network section).
  std::string type = "gru";
  /// Size of the memory: GRU hidden units, SHM's H (an H×H memory), FFM's output width d, the KF layers' width
  /// E, the spiking cell's N_h, STM's output width.
  int hidden_size = 256;
  /// Backend options; each section is read only by its backend.
  ShmConfig shm;
  FfmConfig ffm;
  KfConfig kf;
  SpikingConfig spiking;
  StmConfig stm;

  bool per_network = false;  ///< not a key: whether "same" is a valid type

  template <class V>
  void visit(V& v) {
    v.field("type", type, per_network ? kMemoryTypesOrSame : kMemoryTypes);
    v.field("hidden_size", hidden_size, in_range(1, kMaxWidth));
    v.section("shm", shm);
    v.section("ffm", ffm);
    v.section("kf", kf);
    v.section("spiking", spiking);
    v.section("stm", stm);
  }
  bool operator==(const MemoryConfig&) const = default;
};

}  // namespace rlm
