// rlm_envs._core: rlm's torch-free envs (src/envs) for Python. The package (python/src/rlm_envs) turns the raw-layout
// float buffers below into Gymnasium spaces and arrays, batch by batch: nothing here, nor there, runs per env in
// Python. Errors keep the C++ messages: an unknown id raises KeyError, a bad option value or an action outside the
// space ValueError, a key the env does not read TypeError (Python's error for an unexpected keyword), misuse
// RuntimeError.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "core/config_reader.hpp"
#include "core/error.hpp"
#include "core/seed.hpp"
#include "envs/env_extensions.hpp"
#include "envs/registry.hpp"
#include "envs/vec_env.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace rlm::python {
namespace {

using envs::Space;

/// The canonical spelling of `id`; KeyError with the registry's message (closest ids included) when unknown.
std::string known_id(const std::string& id) {
  try {
    return envs::canonical_env_id(id);
  } catch (const EnvError& e) {
    throw nb::key_error(e.what());
  }
}

/// env.options from keyword arguments the package has type-checked and written as YAML scalars, read as a config
/// file's env.options section is (same ranges, choices and messages, located at "rlm_envs").
EnvOptions read_options(const std::string& id, const std::map<std::string, std::string>& values) {
  YAML::Node map(YAML::NodeType::Map);
  for (const auto& [key, value] : values) {
    if (const auto reason = envs::unread_option_reason(id, key)) throw nb::type_error(reason->c_str());
    map[key] = value;
  }
  EnvOptions options;
  const config_reader::Source source{.name = "rlm_envs"};
  config_reader::read_section(map, options, "env.options", source);
  const Report report = [](std::initializer_list<std::string_view>, const std::string& message) {
    throw ConfigError("rlm_envs: " + message);
  };
  options.check(CheckContext{"env.options", report});
  return options;
}

/// The name, type and default of every env option, for the package's keyword checks and docs.
struct OptionLister {
  nb::list fields;
  template <class T, class... Check>
  void field(std::string_view name, const T& value, const Check&...) {
    fields.append(nb::make_tuple(std::string(name), value));
  }
};

/// A space as plain Python data: {"kind": "Discrete", "nvec": [n]}, {"kind": "Box", "low", "high", "shape",
/// "dtype"}, {"kind": "Tuple", "parts": [...]}.
nb::dict describe(const Space& space) {
  nb::dict d;
  switch (space.kind) {
    case Space::Kind::Discrete:
      d["kind"] = "Discrete";
      break;
    case Space::Kind::MultiDiscrete:
      d["kind"] = "MultiDiscrete";
      break;
    case Space::Kind::Box:
      d["kind"] = "Box";
      d["low"] = space.low;
      d["high"] = space.high;
      d["shape"] = space.shape;
      d["dtype"] = space.dtype == Space::DType::UInt8 ? "uint8" : "float32";
      break;
    case Space::Kind::Tuple: {
      d["kind"] = "Tuple";
      nb::list parts;
      for (const Space& part : space.parts) parts.append(describe(part));
      d["parts"] = parts;
      break;
    }
  }
  if (space.kind == Space::Kind::Discrete || space.kind == Space::Kind::MultiDiscrete) d["nvec"] = space.nvec;
  return d;
}

/// ValueError with the env's own message when a row of `actions` is outside `space`. The envs clip Box actions to
/// their bounds, as their references do, so only a NaN is refused there. Checked before stepping: an env that throws
/// mid-batch would leave the batch needing reset().
void check_actions(const std::string& id, const Space& space, std::span<const float> actions, size_t rows) {
  const size_t width = actions.size() / rows;
  for (size_t r = 0; r < rows; ++r) {
    const auto row = actions.subspan(r * width, width);
    const bool valid = space.kind == Space::Kind::Box
                           ? std::none_of(row.begin(), row.end(), [](float x) { return std::isnan(x); })
                           : space.contains(row);
    if (valid) continue;
    try {
      envs::throw_invalid_action(id, row, space);
    } catch (const EnvError& e) {
      throw nb::value_error(e.what());
    }
  }
}

template <class T>
using ReadOnlyArray = nb::ndarray<nb::numpy, const T, nb::c_contig>;

/// A read-only numpy view of `data` shaped `shape`, keeping `owner` (the Python object holding the buffer) alive.
template <class T>
ReadOnlyArray<T> view(std::span<const T> data, std::initializer_list<size_t> shape, nb::handle owner) {
  return ReadOnlyArray<T>(data.data(), shape, owner);
}

/// A fresh numpy array of `shape` holding `values` converted to T: memory numpy owns, for results a caller keeps.
template <class T, class S>
nb::ndarray<nb::numpy, T> owned_copy(std::span<const S> values, std::initializer_list<size_t> shape) {
  T* data = new T[values.size()];
  std::copy(values.begin(), values.end(), data);
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<T*>(p); });
  return nb::ndarray<nb::numpy, T>(data, shape, owner);
}

/// envs::VecEnv with numpy views of its buffers. Valid until the next reset() or step(); the package copies them.
class VecEnvBinding {
 public:
  VecEnvBinding(const std::string& id, int num_envs, int num_threads, uint64_t seed, const envs::WrapperOptions& w,
                const std::map<std::string, std::string>& options)
      : vec_(known_id(id), num_envs, num_threads, seed, w, read_options(id, options)) {}

  void reset() {
    nb::gil_scoped_release release;
    vec_.reset();
  }
  void step(const nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>& actions) {
    const auto rows = static_cast<int64_t>(actions.shape(0));
    if (rows != vec_.num_envs() || static_cast<int64_t>(actions.shape(1)) != vec_.action_size())
      throw nb::value_error(fmt::format("{}: actions have shape ({}, {}), want (num_envs, action floats) = ({}, {})",
                                        envs::gym_style_id(vec_.id()), rows, actions.shape(1), vec_.num_envs(),
                                        vec_.action_size())
                                .c_str());
    const std::span<const float> flat(actions.data(), actions.size());
    check_actions(vec_.id(), vec_.action_space(), flat, static_cast<size_t>(rows));
    nb::gil_scoped_release release;
    vec_.step(flat);
  }

  /// step(), then what a Gymnasium VectorEnv step returns, as fresh arrays: (raw obs float32 [N, D], rewards float64
  /// [N], terminated bool [N], truncated bool [N], whether any episode ended). One call instead of the five views and
  /// their conversions in Python: at popgym's speeds, each numpy call costs about what 64 env steps do.
  nb::tuple step_results(const nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>& actions) {
    step(actions);
    const auto n = static_cast<size_t>(vec_.num_envs());
    const auto terminated = vec_.terminated(), truncated = vec_.truncated();
    bool ended = false;
    for (size_t i = 0; i < n; ++i) ended = ended || terminated[i] != 0 || truncated[i] != 0;
    return nb::make_tuple(owned_copy<float>(vec_.obs(), {n, static_cast<size_t>(vec_.obs_size())}),
                          owned_copy<double>(vec_.rewards(), {n}), owned_copy<bool>(terminated, {n}),
                          owned_copy<bool>(truncated, {n}), ended);
  }

  const envs::VecEnv& vec() const { return vec_; }
  envs::VecEnv& vec() { return vec_; }

 private:
  envs::VecEnv vec_;
};

/// A binding method returning a read-only view of one VecEnv buffer: [num_envs], or [num_envs, obs_size] for obs rows.
template <class T>
auto buffer_view(std::span<const T> (envs::VecEnv::*buffer)() const, bool obs_rows = false) {
  return [buffer, obs_rows](nb::handle self) {
    const auto& v = nb::cast<const VecEnvBinding&>(self).vec();
    const auto n = static_cast<size_t>(v.num_envs());
    return obs_rows ? view((v.*buffer)(), {n, static_cast<size_t>(v.obs_size())}, self)
                    : view((v.*buffer)(), {n}, self);
  };
}

/// One env, seeded as slot `env_index` of a VecEnv: its instance draw from derive_seed(seed, {kEnvInstanceStream,
/// env_index}) and episode k from derive_seed(seed, {kEnvStream, env_index, k}), so that it plays what that slot plays.
/// It refuses a step before reset() or after the episode's end itself, since not every env checks the latter.
class EnvBinding {
 public:
  EnvBinding(const std::string& id, const envs::WrapperOptions& w, const std::map<std::string, std::string>& options)
      : env_(envs::make_env(known_id(id), w, read_options(id, options))),
        task_split_(envs::find_extension<envs::TaskSplitEnv>(*env_)),
        instance_seeded_(envs::find_extension<envs::InstanceSeededEnv>(*env_)),
        golden_(envs::find_extension<envs::GoldenReplayEnv>(*env_)),
        obs_(static_cast<size_t>(env_->observation_space().raw_size())) {}

  /// Starts episode `episode` of slot `env_index` under `seed`; with `new_instance`, draws the instance first.
  void reset(uint64_t seed, uint64_t env_index, uint64_t episode, bool new_instance) {
    if (new_instance && instance_seeded_ != nullptr)
      instance_seeded_->seed_instance(derive_seed(seed, {kEnvInstanceStream, env_index}));
    env_->reset(derive_seed(seed, {kEnvStream, env_index, episode}), obs_);
    running_ = true;
  }
  /// Test hooks for the golden replays (tests/python/test_golden_replay.py): start from a recorded state (JSON text),
  /// and make the next step use recorded draws.
  void restore_golden(const std::string& state) {
    golden().restore_golden(nlohmann::json::parse(state), obs_);
    running_ = true;
  }
  void inject_draws(const std::vector<double>& draws) { golden().inject_draws(draws); }
  /// (reward, terminated, truncated, success).
  nb::tuple step(const nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>& action) {
    if (!running_) envs::throw_env_misuse(env_->id(), "step() called after the episode ended (or before reset())");
    const int64_t size = env_->action_space().raw_size();
    if (static_cast<int64_t>(action.shape(0)) != size)
      throw nb::value_error(fmt::format("{}: an action has {} floats, want {} for action space {}",
                                        envs::gym_style_id(env_->id()), action.shape(0), size,
                                        env_->action_space().to_string())
                                .c_str());
    const std::span<const float> raw(action.data(), action.size());
    check_actions(env_->id(), env_->action_space(), raw, 1);
    const envs::StepResult r = env_->step(raw, obs_);
    running_ = !(r.terminated || r.truncated);
    return nb::make_tuple(r.reward, r.terminated, r.truncated, r.success);
  }

  const envs::Env& env() const { return *env_; }
  std::span<const float> obs() const { return obs_; }
  envs::TaskSplitEnv* task_split() const { return task_split_; }
  std::vector<float> state() const {
    std::vector<float> state(static_cast<size_t>(env_->state_space()->raw_size()));
    env_->write_state(state);
    return state;
  }

 private:
  envs::GoldenReplayEnv& golden() {
    if (golden_ == nullptr) envs::throw_env_misuse(env_->id(), "has no golden-replay hook");
    return *golden_;
  }

  std::unique_ptr<envs::Env> env_;
  envs::TaskSplitEnv* task_split_;
  envs::InstanceSeededEnv* instance_seeded_;
  envs::GoldenReplayEnv* golden_;
  std::vector<float> obs_;
  bool running_ = false;
};

envs::TaskSplitEnv& task_split_of(EnvBinding& e) {
  if (e.task_split() == nullptr)
    envs::throw_env_misuse(e.env().id(), "has no task split (only the meta-RL envs, with env.options.task_split)");
  return *e.task_split();
}

}  // namespace
}  // namespace rlm::python

NB_MODULE(_core, m) {
  using namespace rlm;
  using namespace rlm::python;
  m.doc() = "rlm's environments (C++), under the rlm_envs package's Gymnasium classes";

  // ConfigError (a bad option value) and EnvOptionError (a wrapper the env cannot take) are the caller's values:
  // ValueError. Every other rlm::EnvError is a std::runtime_error, which nanobind raises as RuntimeError.
  nb::register_exception_translator([](const std::exception_ptr& error, void*) {
    try {
      std::rethrow_exception(error);
    } catch (const ConfigError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const EnvOptionError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  m.def("registered_env_ids", &envs::registered_env_ids, "Every canonical id, in `./rlm envs` order.");
  m.def("canonical_env_id", &known_id, "id"_a,
        "The canonical spelling of an id in either spelling (KeyError if unknown).");
  m.def("gym_style_id", &envs::gym_style_id, "canonical_id"_a);
  m.def(
      "env_option_keys", [](const std::string& id) { return envs::env_option_keys(known_id(id)); }, "id"_a,
      "The env.options keys that `id` reads.");
  m.def(
      "option_fields",
      [] {
        OptionLister lister;
        EnvOptions defaults;
        defaults.visit(lister);
        return lister.fields;
      },
      "(name, default) of every env option, in config.yaml's order.");

  nb::class_<VecEnvBinding>(m, "VecEnv")
      .def(nb::init<const std::string&, int, int, uint64_t, const envs::WrapperOptions&,
                    const std::map<std::string, std::string>&>(),
           "id"_a, "num_envs"_a, "num_threads"_a, "seed"_a, "wrappers"_a, "options"_a)
      .def("reset", &VecEnvBinding::reset)
      .def("step", &VecEnvBinding::step, "actions"_a)
      .def("step_results", &VecEnvBinding::step_results, "actions"_a)
      .def(
          "pin_task", [](VecEnvBinding& b, int env, int index) { b.vec().pin_task(env, index); }, "env"_a, "index"_a)
      .def_prop_ro("id", [](const VecEnvBinding& b) { return b.vec().id(); })
      .def_prop_ro("num_envs", [](const VecEnvBinding& b) { return b.vec().num_envs(); })
      .def_prop_ro("num_threads", [](const VecEnvBinding& b) { return b.vec().num_threads(); })
      .def_prop_ro("observation_space", [](const VecEnvBinding& b) { return describe(b.vec().observation_space()); })
      .def_prop_ro("action_space", [](const VecEnvBinding& b) { return describe(b.vec().action_space()); })
      .def_prop_ro("max_episode_steps", [](const VecEnvBinding& b) { return b.vec().max_episode_steps(); })
      .def_prop_ro("reports_success", [](const VecEnvBinding& b) { return b.vec().reports_success(); })
      .def_prop_ro("reports_goal_state", [](const VecEnvBinding& b) { return b.vec().reports_goal_state(); })
      .def_prop_ro("split_size", [](const VecEnvBinding& b) { return b.vec().split_size(); })
      .def_prop_ro("episode_counters", [](const VecEnvBinding& b) { return b.vec().episode_counters(); })
      .def("obs", buffer_view(&envs::VecEnv::obs, /*obs_rows=*/true))
      .def("final_obs", buffer_view(&envs::VecEnv::final_obs, /*obs_rows=*/true))
      .def("rewards", buffer_view(&envs::VecEnv::rewards))
      .def("terminated", buffer_view(&envs::VecEnv::terminated))
      .def("truncated", buffer_view(&envs::VecEnv::truncated))
      .def("successes", buffer_view(&envs::VecEnv::successes))
      .def("goal_states", buffer_view(&envs::VecEnv::goal_states))
      .def("tasks", buffer_view(&envs::VecEnv::tasks));

  nb::class_<EnvBinding>(m, "Env")
      .def(nb::init<const std::string&, const envs::WrapperOptions&, const std::map<std::string, std::string>&>(),
           "id"_a, "wrappers"_a, "options"_a)
      .def("reset", &EnvBinding::reset, "seed"_a, "env_index"_a, "episode"_a, "new_instance"_a)
      .def("step", &EnvBinding::step, "action"_a)
      .def("obs",
           [](nb::handle self) {
             const auto& e = nb::cast<const EnvBinding&>(self);
             return view(e.obs(), {e.obs().size()}, self);
           })
      .def("state", &EnvBinding::state)
      .def("restore_golden", &EnvBinding::restore_golden, "state_json"_a)
      .def("inject_draws", &EnvBinding::inject_draws, "draws"_a)
      .def(
          "pin_task", [](EnvBinding& e, int index) { task_split_of(e).pin_task(index); }, "index"_a)
      .def("task", [](EnvBinding& e) { return task_split_of(e).task(); })
      .def("is_goal_state", [](EnvBinding& e) { return task_split_of(e).is_goal_state(); })
      .def_prop_ro("id", [](const EnvBinding& e) { return e.env().id(); })
      .def_prop_ro("observation_space", [](const EnvBinding& e) { return describe(e.env().observation_space()); })
      .def_prop_ro("action_space", [](const EnvBinding& e) { return describe(e.env().action_space()); })
      .def_prop_ro("state_space",
                   [](const EnvBinding& e) -> nb::object {
                     const Space* s = e.env().state_space();
                     return s != nullptr ? nb::object(describe(*s)) : nb::none();
                   })
      .def_prop_ro("max_episode_steps", [](const EnvBinding& e) { return e.env().max_episode_steps(); })
      .def_prop_ro("reports_success", [](const EnvBinding& e) { return e.env().reports_success(); })
      .def_prop_ro("has_task_split", [](const EnvBinding& e) { return e.task_split() != nullptr; })
      .def_prop_ro("split_size",
                   [](const EnvBinding& e) { return e.task_split() != nullptr ? e.task_split()->split_size() : 0; });

  nb::class_<envs::WrapperOptions>(m, "Wrappers", "The popgym-style wrappers (envs/registry.hpp); all off by default.")
      .def("__init__",
           [](envs::WrapperOptions* w) {
             new (w) envs::WrapperOptions{.previous_action = false,
                                          .antialias = false,
                                          .flatten = false,
                                          .markovian = "partial",
                                          .discrete_action = false};
           })
      .def_rw("previous_action", &envs::WrapperOptions::previous_action)
      .def_rw("antialias", &envs::WrapperOptions::antialias)
      .def_rw("flatten", &envs::WrapperOptions::flatten)
      .def_rw("markovian", &envs::WrapperOptions::markovian)
      .def_rw("discrete_action", &envs::WrapperOptions::discrete_action);
}
