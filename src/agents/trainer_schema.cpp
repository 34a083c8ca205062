// The trainers' sections (trainer_schema.hpp). A new trainer adds its row here and its factory in trainer.cpp.
#include "agents/trainer_schema.hpp"

#include <algorithm>

#include "core/config_suggest.hpp"

namespace rlm {

const std::vector<TrainerSchema>& trainer_schemas() {
  static const std::vector<TrainerSchema> schemas = {
      {"ppo", {"algo.ppo", "model.ppo"}},
      {"sac", {"algo.off_policy", "algo.sac", "model.off_policy"}},
      {"sacd", {"algo.off_policy", "algo.sacd", "model.off_policy"}},
      {"td3", {"algo.off_policy", "algo.td3", "model.off_policy"}},
  };
  return schemas;
}

Choices trainer_types() {
  Choices choices;
  for (const TrainerSchema& schema : trainer_schemas()) choices.values.push_back(schema.type);
  return choices;
}

std::vector<std::string_view> sections_holding(std::string_view key) {
  std::vector<std::string_view> sections;
  for (const TrainerSchema& schema : trainer_schemas()) {
    for (std::string_view section : schema.reads) {
      if (config_detail::lies_under(key, section) &&
          std::find(sections.begin(), sections.end(), section) == sections.end())
        sections.push_back(section);
    }
  }
  return sections;
}

}  // namespace rlm
