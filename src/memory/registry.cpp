#include "memory/registry.hpp"

#include <functional>
#include <map>

#include "core/error.hpp"
#include "memory/gru.hpp"
#include "memory/shm.hpp"

namespace rlm::memory {
namespace {

using Factory = std::function<std::shared_ptr<Memory>(const MemoryConfig&, int64_t)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"gru", [](const MemoryConfig& c, int64_t in) { return std::make_shared<Gru>(in, c.hidden_size); }},
      {"shm",
       [](const MemoryConfig& c, int64_t in) {
         ShmOptions o;
         o.memory_size = c.hidden_size;
         o.output_size = c.shm.output_size;
         o.num_thetas = c.shm.num_thetas;
         o.calibration = c.shm.calibration;
         o.theta_sampling = c.shm.theta_sampling;
         o.state_clamp = c.shm.state_clamp;
         o.shortcut = c.shm.shortcut;
         return std::make_shared<Shm>(in, o);
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
