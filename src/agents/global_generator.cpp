#include "agents/global_generator.hpp"

namespace rlm::agents {

std::mutex& global_generator_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace rlm::agents
