#include "envs/wrappers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"

namespace rlm::envs {
namespace {

/// gymnasium's Tuple append rule: a Tuple obs gains one more element, anything else becomes a 2-tuple.
Space append_part(const Space& obs, Space extra) {
  std::vector<Space> parts;
  if (obs.kind == Space::Kind::Tuple) {
    parts = obs.parts;
  } else {
    parts.push_back(obs);
  }
  parts.push_back(std::move(extra));
  return Space::tuple(std::move(parts));
}

void append_blocks(const Space& space, std::vector<Flatten::Block>& out);

void append_null_action(const Space& space, std::vector<float>& out) {
  switch (space.kind) {
    case Space::Kind::Discrete:
    case Space::Kind::MultiDiscrete:
      out.insert(out.end(), space.nvec.size(), 0.0f);
      break;
    case Space::Kind::Box:
      for (size_t i = 0; i < space.low.size(); ++i) out.push_back(std::clamp(0.0f, space.low[i], space.high[i]));
      break;
    case Space::Kind::Tuple:
      for (const Space& p : space.parts) append_null_action(p, out);
      break;
  }
}

void append_blocks(const Space& space, std::vector<Flatten::Block>& out) {
  switch (space.kind) {
    case Space::Kind::Discrete:
    case Space::Kind::MultiDiscrete:
      for (int64_t n : space.nvec) out.push_back({.size = n, .one_hot = true});
      break;
    case Space::Kind::Box:
      out.insert(out.end(), space.low.size(), {.size = 1, .one_hot = false});
      break;
    case Space::Kind::Tuple:
      for (const Space& p : space.parts) append_blocks(p, out);
      break;
  }
}

}  // namespace

Wrapper::Wrapper(std::unique_ptr<Env> inner) : inner_(std::move(inner)) {
  if (!inner_) throw EnvError("a wrapper needs an env to wrap, got null");
}

PreviousAction::PreviousAction(std::unique_ptr<Env> inner)
    : Wrapper(std::move(inner)),
      observation_space_(append_part(inner_->observation_space(), inner_->action_space())),
      inner_size_(static_cast<size_t>(inner_->observation_space().raw_size())) {
  append_null_action(inner_->action_space(), null_action_);
}

void PreviousAction::reset(uint64_t seed, std::span<float> obs) {
  inner_->reset(seed, obs.first(inner_size_));
  std::copy(null_action_.begin(), null_action_.end(), obs.begin() + static_cast<ptrdiff_t>(inner_size_));
}

StepResult PreviousAction::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = inner_->step(action, obs.first(inner_size_));  // validates the action before we copy it
  std::copy(action.begin(), action.end(), obs.begin() + static_cast<ptrdiff_t>(inner_size_));
  return r;
}

Antialias::Antialias(std::unique_ptr<Env> inner)
    : Wrapper(std::move(inner)),
      observation_space_(append_part(inner_->observation_space(), Space::discrete(2))),
      inner_size_(static_cast<size_t>(inner_->observation_space().raw_size())) {}

void Antialias::reset(uint64_t seed, std::span<float> obs) {
  inner_->reset(seed, obs.first(inner_size_));
  obs[inner_size_] = 1.0f;
}

StepResult Antialias::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = inner_->step(action, obs.first(inner_size_));
  obs[inner_size_] = 0.0f;
  return r;
}

Flatten::Flatten(std::unique_ptr<Env> inner)
    : Wrapper(std::move(inner)),
      observation_space_(inner_->observation_space().encoded_space()),
      raw_(static_cast<size_t>(inner_->observation_space().raw_size())) {
  append_blocks(inner_->observation_space(), blocks_);
}

void Flatten::encode(std::span<float> out) const {
  float* o = out.data();
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const float v = raw_[i];
    const Block& b = blocks_[i];
    if (!b.one_hot) {
      *o++ = v;
      continue;
    }
    if (!(v >= 0.0f && v < static_cast<float>(b.size) && v == static_cast<float>(static_cast<int64_t>(v))))
        [[unlikely]] {
      // An env wrote a value outside its own space: a bug in the env, reported with the full obs.
      throw EnvError(fmt::format("{}: obs {} is not in {}", gym_style_id(id()), Space::format_value(raw_),
                                 inner_->observation_space().to_string()));
    }
    std::fill(o, o + b.size, 0.0f);
    o[static_cast<int64_t>(v)] = 1.0f;
    o += b.size;
  }
}

void Flatten::reset(uint64_t seed, std::span<float> obs) {
  inner_->reset(seed, raw_);
  encode(obs);
}

StepResult Flatten::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r = inner_->step(action, raw_);
  encode(obs);
  return r;
}

Observability parse_observability(const std::string& level) {
  if (level == "partial") return Observability::kPartial;
  if (level == "full") return Observability::kFull;
  if (level == "full_and_partial") return Observability::kFullAndPartial;
  throw EnvError(fmt::format("unknown Markovian level '{}' (expected partial, full or full_and_partial)", level));
}

namespace {

const char* level_name(Observability level) {
  switch (level) {
    case Observability::kPartial:
      return "partial";
    case Observability::kFull:
      return "full";
    default:
      return "full_and_partial";
  }
}

/// The wrapped env's state space, or an EnvError naming the env when it has none.
const Space& required_state_space(const Env& inner, Observability level) {
  const Space* state = inner.state_space();
  if (state == nullptr)
    throw EnvOptionError("markovian",
                         fmt::format("{}: env.markovian = {} needs the env's state, but the env exposes no state "
                                     "(state_space())",
                                     gym_style_id(inner.id()), level_name(level)));
  return *state;
}

Space markovian_space(const Env& inner, Observability level) {
  switch (level) {
    case Observability::kPartial:
      return inner.observation_space();
    case Observability::kFull:
      return required_state_space(inner, level);
    default:
      return Space::tuple({inner.observation_space(), required_state_space(inner, level)});
  }
}

}  // namespace

Markovian::Markovian(std::unique_ptr<Env> inner, Observability level)
    : Wrapper(std::move(inner)),
      level_(level),
      observation_space_(markovian_space(*inner_, level)),
      inner_size_(level == Observability::kFull ? 0 : static_cast<size_t>(inner_->observation_space().raw_size())),
      inner_obs_(level == Observability::kFull ? static_cast<size_t>(inner_->observation_space().raw_size()) : 0) {}

void Markovian::write_obs_state(std::span<float> obs) const {
  if (level_ != Observability::kPartial) inner_->write_state(obs.subspan(inner_size_));
}

void Markovian::reset(uint64_t seed, std::span<float> obs) {
  inner_->reset(seed, level_ == Observability::kFull ? std::span<float>(inner_obs_) : obs.first(inner_size_));
  write_obs_state(obs);
}

StepResult Markovian::step(std::span<const float> action, std::span<float> obs) {
  const StepResult r =
      inner_->step(action, level_ == Observability::kFull ? std::span<float>(inner_obs_) : obs.first(inner_size_));
  write_obs_state(obs);
  return r;
}

namespace {

Space discrete_action_space(const Env& inner) {
  const Space& space = inner.action_space();
  if (space.kind == Space::Kind::Discrete) return space;
  if (space.kind != Space::Kind::MultiDiscrete)
    throw EnvOptionError("discrete_action",
                         fmt::format("{}: env.discrete_action needs a Discrete or MultiDiscrete action space, got {}",
                                     gym_style_id(inner.id()), space.to_string()));
  constexpr int64_t kMaxExactFloat = int64_t{1} << 24;  // every action index must survive the float round trip
  int64_t n = 1;
  for (int64_t k : space.nvec) {
    n *= k;
    if (n > kMaxExactFloat)
      throw EnvOptionError("discrete_action",
                           fmt::format("{}: env.discrete_action: {} has more than 2^24 joint actions",
                                       gym_style_id(inner.id()), space.to_string()));
  }
  return Space::discrete(n);
}

}  // namespace

DiscreteAction::DiscreteAction(std::unique_ptr<Env> inner)
    : Wrapper(std::move(inner)),
      action_space_(discrete_action_space(*inner_)),
      ravel_(inner_->action_space().kind == Space::Kind::MultiDiscrete),
      decoded_(ravel_ ? inner_->action_space().nvec.size() : 0) {}

StepResult DiscreteAction::step(std::span<const float> action, std::span<float> obs) {
  if (!ravel_) return inner_->step(action, obs);
  int64_t a = discrete_action(action, action_space_, id());
  const std::vector<int64_t>& nvec = inner_->action_space().nvec;
  for (size_t i = nvec.size(); i-- > 0;) {  // numpy's unravel_index, C order: the last component varies fastest
    decoded_[i] = static_cast<float>(a % nvec[i]);
    a /= nvec[i];
  }
  return inner_->step(decoded_, obs);
}

}  // namespace rlm::envs
