// Digests of VecEnv trajectories under a fixed action rule (tests/data/vec_env_digests.json): the batches that rlm's
// trainers step. The Python package's tests (tests/python/test_seeding.py) play the same cases through
// rlm_envs.make_vec and must reach the same digests, so a Python user gets the trainers' episodes for a seed.
// RLM_RECORD_DIGESTS=1 writes the digests of the cases in the file back into it (after a deliberate change to an env).
#include <yaml-cpp/yaml.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/config_reader.hpp"
#include "envs/vec_env.hpp"
#include "test_data.hpp"

using namespace rlm::envs;

namespace {

/// Env i's action at step t, in the raw layout: Discrete (7i + 3t) mod n, MultiDiscrete part j (7i + 3t + j) mod
/// nvec[j], Box part j ((7i + 3t + j) mod 9 - 4) / 4 (exact in float32; the envs clip it to their bounds).
void fill_actions(const Space& space, int num_envs, int64_t t, std::vector<float>& actions) {
  const size_t width = actions.size() / static_cast<size_t>(num_envs);
  for (int i = 0; i < num_envs; ++i) {
    for (size_t j = 0; j < width; ++j) {
      const int64_t k = 7 * i + 3 * t + static_cast<int64_t>(j);
      float a = 0;
      if (space.kind == Space::Kind::Box)
        a = static_cast<float>(k % 9 - 4) * 0.25f;
      else
        a = static_cast<float>(k % space.nvec[j]);
      actions[static_cast<size_t>(i) * width + j] = a;
    }
  }
}

template <class T>
uLong add(uLong crc, std::span<const T> values) {
  return crc32(crc, reinterpret_cast<const Bytef*>(values.data()), static_cast<uInt>(values.size_bytes()));
}

/// crc32 of the obs after reset, then of obs, rewards, terminated and truncated after each step.
std::string digest(const nlohmann::json& c) {
  const nlohmann::json& w = c["wrappers"];
  const WrapperOptions wrappers{
      .previous_action = w["previous_action"], .antialias = w["antialias"], .flatten = w["flatten"]};
  YAML::Node map(YAML::NodeType::Map);
  for (const auto& [key, value] : c["options"].items())
    map[key] = value.is_string() ? value.get<std::string>() : value.dump();
  rlm::EnvOptions options;
  rlm::config_reader::read_section(map, options, "env.options", rlm::config_reader::Source{.name = "digest case"});
  const int num_envs = c["num_envs"];
  VecEnv vec(c["id"].get<std::string>(), num_envs, /*num_threads=*/1, c["seed"].get<uint64_t>(), wrappers, options);
  REQUIRE(vec.action_space().kind != Space::Kind::Tuple);
  vec.reset();
  uLong crc = add(crc32(0L, Z_NULL, 0), vec.obs());
  std::vector<float> actions(static_cast<size_t>(num_envs * vec.action_size()));
  for (int64_t t = 0; t < c["steps"].get<int64_t>(); ++t) {
    fill_actions(vec.action_space(), num_envs, t, actions);
    vec.step(actions);
    crc = add(crc, vec.obs());
    crc = add(crc, vec.rewards());
    crc = add(crc, vec.terminated());
    crc = add(crc, vec.truncated());
  }
  return fmt::format("{:08x}", crc);
}

}  // namespace

TEST_CASE("VecEnv digests match tests/data/vec_env_digests.json (the Python package checks the same)") {
  nlohmann::json cases = test::load_test_data("vec_env_digests.json");
  REQUIRE(cases.size() >= 6);
  const char* record = std::getenv("RLM_RECORD_DIGESTS");
  for (auto& c : cases) {
    const std::string got = digest(c);
    if (record != nullptr && std::string(record) == "1") {
      c["digest"] = got;
      continue;
    }
    INFO(c["id"].get<std::string>());
    CHECK(got == c["digest"].get<std::string>());
  }
  if (record != nullptr && std::string(record) == "1") {
    const char* root = std::getenv("RLM_SOURCE_DIR");
    std::ofstream(std::filesystem::path(root ? root : ".") / "tests/data/vec_env_digests.json")
        << cases.dump(2) << "\n";
  }
}
