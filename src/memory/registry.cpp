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

/// A backend's options from its config section (the options struct derives from it), the rest at their defaults.
template <class Options, class Section>
Options options_from(const Section& section) {
  Options options;
  static_cast<Section&>(options) = section;
  return options;
}

// Each backend reads its own config section (memory/<backend>_config.hpp) as the base of its options; the registry
// adds only the widths: the input (from the network) and model.memory.hidden_size in the backend's own name for it.
const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"gru", [](const MemoryConfig& c, int64_t in) { return std::make_shared<Gru>(in, c.hidden_size); }},
      {"shm",
       [](const MemoryConfig& c, int64_t in) {
         auto o = options_from<ShmOptions>(c.shm);
         o.memory_size = c.hidden_size;
         return std::make_shared<Shm>(in, o);
       }},
      {"ffm",
       [](const MemoryConfig& c, int64_t in) {
         auto o = options_from<FfmOptions>(c.ffm);
         o.output_size = c.hidden_size;
         return std::make_shared<Ffm>(in, o);
       }},
      {"kf",
       [](const MemoryConfig& c, int64_t in) {
         auto o = options_from<KfOptions>(c.kf);
         o.hidden_size = c.hidden_size;
         return std::make_shared<Kf>(in, o);
       }},
      {"spiking",
       [](const MemoryConfig& c, int64_t in) {
         auto o = options_from<SpikingOptions>(c.spiking);
         o.hidden_size = c.hidden_size;
         return std::make_shared<Spiking>(in, o);
       }},
      {"stm",
       [](const MemoryConfig& c, int64_t in) {
         auto o = options_from<StmOptions>(c.stm);
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
