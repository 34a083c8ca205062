// The Box2D tasks' env.options in the experiment config: which ids read which option, the gravity
// range Gymnasium asserts, and the gym spelling of the ids. The envs themselves are tested in tests/box2d.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "agents/experiment_config.hpp"
#include "core/config_test_util.hpp"
#include "core/error.hpp"
#include "envs/registry.hpp"

namespace fs = std::filesystem;

namespace {

using rlm::config_test::error_of;
using rlm::config_test::parse;

/// A YAML file in a fresh temporary folder, removed with it.
struct TempYaml {
  fs::path dir, file;
  explicit TempYaml(const std::string& text) {
    static int counter = 0;
    dir = fs::temp_directory_path() /
          ("rlm_test_box2d_options_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir);
    fs::create_directories(dir);
    file = dir / "box2d.yaml";
    std::ofstream(file, std::ios::binary) << text;
  }
  ~TempYaml() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

/// "env:\n  id: <id>\n  options:\n    <option>\n".
std::string env_yaml(const std::string& id, const std::string& option) {
  return "env:\n  id: " + id + "\n  options:\n    " + option + "\n";
}

bool reads(const std::string& id, std::string_view option) {
  const auto& read = rlm::envs::env_option_keys(id);
  return std::find(read.begin(), read.end(), option) != read.end();
}

const std::vector<std::string> kLanderIds = {
    "box2d/LunarLander",           "box2d/LunarLander-P",           "box2d/LunarLander-V",
    "box2d/LunarLanderContinuous", "box2d/LunarLanderContinuous-P", "box2d/LunarLanderContinuous-V"};
const std::vector<std::string> kWalkerIds = {"box2d/BipedalWalker",           "box2d/BipedalWalker-P",
                                             "box2d/BipedalWalker-V",         "box2d/BipedalWalkerHardcore",
                                             "box2d/BipedalWalkerHardcore-P", "box2d/BipedalWalkerHardcore-V"};

/// "box2d/LunarLander-P" -> "box2d-LunarLander-P-v0".
std::string gym(const std::string& id) { return "box2d-" + id.substr(6) + "-v0"; }

}  // namespace

TEST_CASE("box2d options: a config file setting lidar_in_p for a lander is an error naming the key",
          "[config][box2d]") {
  const TempYaml yaml(env_yaml("box2d/LunarLander", "lidar_in_p: false"));
  std::string message;
  try {
    rlm::load_config(yaml.file);
  } catch (const rlm::ConfigError& e) {
    message = e.what();
  }
  CHECK(message == yaml.file.string() +
                       ":4: env.options.lidar_in_p: env box2d/LunarLander reads only env.options.obs_noise_sigma, "
                       "env.options.noise_on_binary, env.options.gravity, env.options.enable_wind, "
                       "env.options.wind_power, env.options.turbulence_power, env.options.box2d23_limits");
  // The same file with the walker's P id is fine, and the option arrives.
  const TempYaml walker(env_yaml("box2d/BipedalWalker-P", "lidar_in_p: false"));
  CHECK_FALSE(rlm::load_config(walker.file).env.options.lidar_in_p);
  // A command-line override is refused the same way.
  std::string override_message;
  try {
    rlm::load_config(walker.file, {"env.id=box2d/LunarLanderContinuous-P"});
  } catch (const rlm::ConfigError& e) {
    override_message = e.what();
  }
  CHECK_THAT(override_message, Catch::Contains("env.options.lidar_in_p: env box2d/LunarLanderContinuous-P reads only"));
}

TEST_CASE("box2d options: each id reads only its own options", "[config][box2d]") {
  for (const std::string& id : kLanderIds) {
    INFO(id);
    for (const std::string& spelling : {id, gym(id)}) {
      INFO(spelling);
      const bool continuous = id.find("Continuous") != std::string::npos;
      for (std::string_view o : {"obs_noise_sigma", "noise_on_binary", "gravity", "enable_wind", "wind_power",
                                 "turbulence_power", "box2d23_limits"})
        CHECK(reads(spelling, o));
      CHECK(reads(spelling, "action_noise_sigma") == continuous);  // a discrete lander cannot take action noise
      CHECK_FALSE(reads(spelling, "lidar_in_p"));
      CHECK_FALSE(reads(spelling, "contacts_in_v"));
    }
    CHECK(error_of(env_yaml(id, "lidar_in_p: false")) != "");
    CHECK(error_of(env_yaml(id, "contacts_in_v: true")) != "");
    CHECK(error_of(env_yaml(id, "gravity: -1.62")) == "");
    CHECK(error_of(env_yaml(id, "enable_wind: true")) == "");
    CHECK(error_of(env_yaml(id, "obs_noise_sigma: 0.3")) == "");
    CHECK(error_of(env_yaml(id, "noise_on_binary: false")) == "");
  }
  CHECK(error_of(env_yaml("box2d/LunarLander", "action_noise_sigma: 0.3")) ==
        "x.yaml:4: env.options.action_noise_sigma: env box2d/LunarLander reads only env.options.obs_noise_sigma, "
        "env.options.noise_on_binary, env.options.gravity, env.options.enable_wind, env.options.wind_power, "
        "env.options.turbulence_power, env.options.box2d23_limits");
  CHECK(parse(env_yaml("box2d/LunarLanderContinuous-V", "action_noise_sigma: 0.3")).env.options.action_noise_sigma ==
        0.3);

  for (const std::string& id : kWalkerIds) {
    INFO(id);
    const bool p = id.ends_with("-P"), v = id.ends_with("-V");
    for (const std::string& spelling : {id, gym(id)}) {
      INFO(spelling);
      for (std::string_view o : {"obs_noise_sigma", "noise_on_binary", "action_noise_sigma", "box2d23_limits"})
        CHECK(reads(spelling, o));
      CHECK(reads(spelling, "lidar_in_p") == p);
      CHECK(reads(spelling, "contacts_in_v") == v);
      for (std::string_view o : {"gravity", "enable_wind", "wind_power", "turbulence_power"})
        CHECK_FALSE(reads(spelling, o));
    }
    CHECK((error_of(env_yaml(id, "lidar_in_p: false")) == "") == p);
    CHECK((error_of(env_yaml(id, "contacts_in_v: true")) == "") == v);
    CHECK(error_of(env_yaml(id, "gravity: -5")) != "");
    CHECK(error_of(env_yaml(id, "enable_wind: true")) != "");
    CHECK(error_of(env_yaml(id, "action_noise_sigma: 0.3")) == "");
  }
  CHECK(error_of(env_yaml("box2d/BipedalWalker-V", "lidar_in_p: false")) ==
        "x.yaml:4: env.options.lidar_in_p: env box2d/BipedalWalker-V reads only env.options.obs_noise_sigma, "
        "env.options.noise_on_binary, env.options.action_noise_sigma, env.options.contacts_in_v, "
        "env.options.box2d23_limits");
  CHECK(parse(env_yaml("box2d/BipedalWalkerHardcore-V", "contacts_in_v: true")).env.options.contacts_in_v);
  // The Box2D options are not read by the other families.
  CHECK(error_of(env_yaml("memory_rl/TMazePassive", "obs_noise_sigma: 0.1")) != "");
  CHECK(error_of(env_yaml("popgym/RepeatFirstEasy", "gravity: -5")) != "");
  // A key written with its default value changes nothing, so it is accepted even where it is not read (the rule
  // for every env option: a run folder's config.yaml writes every key).
  CHECK(error_of(env_yaml("box2d/LunarLander", "lidar_in_p: true")) == "");
}

TEST_CASE("box2d options: gravity must lie strictly inside minus 12 to 0", "[config][box2d]") {
  for (const std::string bad : {"-12", "0", "-12.5", "3", "-100"}) {
    INFO(bad);
    const std::string message = error_of(env_yaml("box2d/LunarLanderContinuous", "gravity: " + bad));
    CHECK(message == "x.yaml:4: env.options.gravity = " + bad + " is out of range (-12, 0)");
  }
  for (const std::string good : {"-11.99", "-10", "-1.62", "-0.01"}) {
    INFO(good);
    CHECK(parse(env_yaml("box2d/LunarLander-V", "gravity: " + good)).env.options.gravity == std::stod(good));
  }
  // Through a file as well.
  const TempYaml yaml(env_yaml("box2d/LunarLander-P", "gravity: -12"));
  CHECK_THROWS_WITH(
      rlm::load_config(yaml.file),
      Catch::Contains("env.options.gravity = -12 is out of range (-12, 0)") && Catch::Contains(yaml.file.string()));
}

TEST_CASE("box2d options: noise sigmas are checked and round-trip through YAML", "[config][box2d]") {
  CHECK(error_of(env_yaml("box2d/BipedalWalker", "obs_noise_sigma: -0.1")) ==
        "x.yaml:4: env.options.obs_noise_sigma = -0.1 is out of range [0, 100]");
  CHECK(error_of(env_yaml("box2d/BipedalWalker", "action_noise_sigma: -0.3")) ==
        "x.yaml:4: env.options.action_noise_sigma = -0.3 is out of range [0, 100]");
  const rlm::Config c = parse(
      "env:\n  id: box2d-BipedalWalkerHardcore-P-v0\n  options:\n    obs_noise_sigma: 0.3\n    noise_on_binary: "
      "false\n    action_noise_sigma: 0.1\n    lidar_in_p: false\n");
  CHECK(c.env.id == "box2d-BipedalWalkerHardcore-P-v0");  // the config keeps the spelling; make_env resolves it
  CHECK(c.env.options.obs_noise_sigma == 0.3);
  CHECK_FALSE(c.env.options.noise_on_binary);
  CHECK(c.env.options.action_noise_sigma == 0.1);
  CHECK_FALSE(c.env.options.lidar_in_p);
  CHECK(parse(rlm::to_yaml(c)) == c);
}

TEST_CASE("box2d options: the gym spelling of an id reads the same options", "[config][box2d]") {
  CHECK(error_of(env_yaml("box2d-LunarLander-P-v0", "lidar_in_p: false")) ==
        "x.yaml:4: env.options.lidar_in_p: env box2d-LunarLander-P-v0 reads only env.options.obs_noise_sigma, "
        "env.options.noise_on_binary, env.options.gravity, env.options.enable_wind, env.options.wind_power, "
        "env.options.turbulence_power, env.options.box2d23_limits");
  CHECK(parse(env_yaml("box2d-LunarLander-P-v0", "gravity: -5")).env.options.gravity == -5.0);
  CHECK_FALSE(parse(env_yaml("box2d-BipedalWalker-P-v0", "lidar_in_p: false")).env.options.lidar_in_p);
  CHECK(parse(env_yaml("box2d-BipedalWalker-V-v0", "contacts_in_v: true")).env.options.contacts_in_v);
  CHECK(error_of(env_yaml("box2d-BipedalWalker-v0", "contacts_in_v: true")) != "");
}
