// The trainer table (agents/trainer.cpp) and the trainers' config sections (agents/trainer_schema.cpp) agree: every
// type has both a factory and a schema, and every algo/model key is shared or read by some trainer.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "agents/experiment_config.hpp"
#include "agents/trainer.hpp"
#include "agents/trainer_schema.hpp"
#include "core/config_suggest.hpp"

TEST_CASE("every trainer type has a registry row and a schema, in the same order", "[agents][config]") {
  std::vector<std::string_view> schema_types, row_types;
  for (const auto& schema : rlm::trainer_schemas()) schema_types.push_back(schema.type);
  for (const auto& row : rlm::agents::trainer_rows()) row_types.push_back(row.type);
  CHECK(row_types == schema_types);
  CHECK(rlm::trainer_types().values == schema_types);
}

TEST_CASE("every algo and model key is shared or read by some trainer, and every read section exists",
          "[agents][config]") {
  const auto keys = rlm::config_keys();
  const auto is_key = [&](std::string_view k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
  for (const auto& schema : rlm::trainer_schemas()) {
    for (std::string_view section : schema.reads) {
      INFO(schema.type << " reads " << section);
      CHECK(is_key(section));
    }
  }
  const std::vector<std::string_view> shared = {"algo.type", "algo.total_steps", "model.encoder", "model.cnn",
                                                "model.memory"};
  for (const std::string& key : keys) {
    if (!key.starts_with("algo.") && !key.starts_with("model.")) continue;
    const bool is_shared = std::any_of(shared.begin(), shared.end(), [&](std::string_view s) {
      return key == s || rlm::config_detail::lies_under(key, s);
    });
    const bool is_section = std::any_of(rlm::trainer_schemas().begin(), rlm::trainer_schemas().end(), [&](auto& s) {
      return std::find(s.reads.begin(), s.reads.end(), key) != s.reads.end();
    });
    INFO(key);
    CHECK((is_shared || is_section || !rlm::sections_holding(key).empty()));
  }
}
