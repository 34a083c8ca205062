#include "memory/registry.hpp"

#include <functional>
#include <map>

#include "core/error.hpp"
#include "memory/ffm.hpp"
#include "memory/gru.hpp"
#include "memory/kf.hpp"
#include "memory/shm.hpp"
#include "memory/spiking.hpp"
#include "memory/stm.hpp"

namespace rlm::memory {
namespace {

using Factory = std::function<std::shared_ptr<Memory>(const MemoryConfig&, int64_t)>;

// Each backend reads its own config section (memory/<backend>_config.hpp) as the base of its options; the registry
// adds only the widths: the input (from the network) and model.memory.hidden_size in the backend's own name for it.
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"gru", [](const MemoryConfig& c, int64_t in) { return std::make_shared<Gru>(in, c.hidden_size); }},
      {"shm",
       [](const MemoryConfig& c, int64_t in) {
         ShmOptions o{c.shm};
         o.memory_size = c.hidden_size;
         return std::make_shared<Shm>(in, o);
       }},
      {"ffm",
       [](const MemoryConfig& c, int64_t in) {
         FfmOptions o{c.ffm};
         o.output_size = c.hidden_size;
         return std::make_shared<Ffm>(in, o);
       }},
      {"kf",
       [](const MemoryConfig& c, int64_t in) {
         KfOptions o{c.kf};
         o.hidden_size = c.hidden_size;
         return std::make_shared<Kf>(in, o);
       }},
      {"spiking",
       [](const MemoryConfig& c, int64_t in) {
         SpikingOptions o{c.spiking};
         o.hidden_size = c.hidden_size;
         return std::make_shared<Spiking>(in, o);
       }},
      {"stm",
       [](const MemoryConfig& c, int64_t in) {
         StmOptions o{c.stm};
         o.output_size = c.hidden_size;
         return std::make_shared<Stm>(in, o);
       }},
  };
  return table;
}

}  // namespace

std::shared_ptr<Memory> make_memory(const MemoryConfig& config, int64_t input_size) {
  const auto it = factories().find(config.type);
  if (it == factories().end()) throw ConfigError("model.memory.type: unknown memory backend '" + config.type + "'");
  return it->second(config, input_size);
}

std::vector<std::string> memory_types() {
  std::vector<std::string> out;
  for (const auto& [name, _] : factories()) out.push_back(name);
  return out;
}

}  // namespace rlm::memory
