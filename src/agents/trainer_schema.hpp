// Which config sections each trainer reads, torch-free: the config layer derives from it the choices of algo.type
// and the keys a config sets that its trainer would not read. agents/trainer.cpp builds a trainer of each type.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/config_schema.hpp"

namespace rlm {

/// One trainer's part of the config. Every trainer also reads the shared keys: experiment, env, logging,
/// checkpoint, eval, algo.type, algo.total_steps, model.encoder, model.cnn and model.memory.
struct TrainerSchema {
  std::string_view type;                ///< the algo.type value
  std::vector<std::string_view> reads;  ///< the sections only it (and trainers of its family) reads
};

/// Every trainer, in the order algo.type lists them.
const std::vector<TrainerSchema>& trainer_schemas();

/// The algo.type choices: every trainer's type.
Choices trainer_types();

/// The trainer sections (some schema's `reads`) that hold `key`; empty for a shared key.
std::vector<std::string_view> sections_holding(std::string_view key);

}  // namespace rlm
