// Maps model.memory.type to a backend factory. Adding a backend: one file pair and one row in registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "memory/memory.hpp"
#include "memory/memory_config.hpp"

namespace rlm::memory {

std::shared_ptr<Memory> make_memory(const MemoryConfig& config, int64_t input_size);
std::vector<std::string> memory_types();

}  // namespace rlm::memory
