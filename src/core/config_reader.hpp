// The engine behind every config schema: reads a YAML document into a root struct (any struct whose visit() lists
// its fields and sections, core/config_schema.hpp), applies key.path=value overrides, and writes, lists and
// compares keys. Header-only, included by the one file that instantiates it for the experiment config
// (agents/experiment_config.cpp), so no other file compiles yaml-cpp.
// FieldReader parses one YAML key into its field, Writer emits every field, KeyCollector lists the known keys,
// ValueCollector collects every value as text.
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config_io.hpp"
#include "core/config_schema.hpp"
#include "core/config_suggest.hpp"
#include "core/error.hpp"

namespace rlm::config_reader {

/// The most YAML nodes a config, sweep file or paper table may expand to (counting each alias's copy): a config has
/// a few hundred, and nested anchors ("alias bombs") reach billions from a few hundred bytes.
inline constexpr int64_t kMaxYamlNodes = 1'000'000;

using config_detail::join;
using config_detail::split;

/// An override token as messages quote it: whole up to 200 characters, else its start, "...", and its length.
inline std::string shown_token(const std::string& token) {
  if (token.size() <= 200) return token;
  return fmt::format("{}...({} characters)", token.substr(0, 120), token.size());
}

/// A key that moved to another place in the schema. A config that still uses the old key (a file, an override, a
/// sweep or an old run folder's config.yaml) is refused with "OLD is now NEW" rather than read with another meaning:
/// a key is never given a new meaning in place.
struct KeyMove {
  std::string from, to;  ///< key paths; a section moves with everything under it
};

/// Where `path` is now, when it or a section above it moved.
inline std::optional<std::string> moved_to(const std::string& path, const std::vector<KeyMove>& moves) {
  for (const KeyMove& move : moves) {
    if (path == move.from || config_detail::lies_under(path, move.from)) return move.to + path.substr(move.from.size());
  }
  return std::nullopt;
}

/// Where a value came from: a file (errors say file:line) or one command-line override (errors quote it).
struct Source {
  std::string name = {};  ///< file name, or the whole override token
  bool command_line = false;
  std::string override_key = {};  ///< the key path an override token names; its errors need not repeat it
  std::map<std::string, std::string>* origins = nullptr;  ///< key path -> where it was last set
  const std::vector<std::string>* known_keys = nullptr;   ///< every key path of the schema, for did-you-mean hints
  const std::vector<KeyMove>* moved = nullptr;            ///< keys that moved, named in their errors

  std::string at(const YAML::Node& node) const {
    if (command_line) return "command line: " + shown_token(name);
    const YAML::Mark mark = node.Mark();
    return mark.is_null() ? name : fmt::format("{}:{}", name, mark.line + 1);
  }
};

inline std::string did_you_mean(const std::string& unknown, const std::vector<std::string>& known) {
  const auto hint = config_detail::suggest_key(unknown, known);
  return hint ? fmt::format(" (did you mean '{}'?)", *hint) : std::string();
}
inline std::string did_you_mean(const std::string& unknown, const Source& src) {
  return src.known_keys ? did_you_mean(unknown, *src.known_keys) : std::string();
}

[[noreturn]] inline void fail(const std::string& message) { throw ConfigError(message); }

inline std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

// ---- scalars ----

inline std::string describe(const YAML::Node& node) {
  if (!node || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  return fmt::format("'{}'", node.Scalar());
}

[[noreturn]] inline void type_error(const std::string& at, const YAML::Node& node, const std::string& path,
                                    const Source& src, std::string_view expected) {
  const bool path_in_token = src.command_line && path == src.override_key;
  fail(fmt::format("{}: {}expected {}, got {}", at, path_in_token ? "" : path + ": ", expected, describe(node)));
}

/// YAML allows a leading '+'; from_chars does not.
inline std::string_view without_plus(std::string_view s) {
  return s.size() > 1 && s[0] == '+' && s[1] != '+' && s[1] != '-' ? s.substr(1) : s;
}

inline std::optional<double> to_number(std::string_view s) {
  s = without_plus(s);
  double x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(x)) return std::nullopt;
  return x;
}

/// Integers may be written as 15000000 or 1.5e7, but not 1.5.
inline std::optional<int64_t> to_integer(std::string_view s) {
  const std::string_view digits = without_plus(s);
  int64_t i = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
  if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size()) return i;
  const auto x = to_number(s);
  if (!x || *x != std::floor(*x) || std::fabs(*x) >= 9.2233720368547758e18) return std::nullopt;
  return static_cast<int64_t>(*x);
}

inline std::optional<bool> to_bool(std::string_view s) {
  for (std::string_view t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"}) {
    if (s == t) return true;
  }
  for (std::string_view f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"}) {
    if (s == f) return false;
  }
  return std::nullopt;
}

inline std::string format_range(const Range& r) {
  return fmt::format("{}{}, {}{}", r.lo_open ? '(' : '[', r.lo, r.hi, r.hi_open ? ')' : ']');
}

inline bool contains(const Range& r, double x) {
  return (r.lo_open ? x > r.lo : x >= r.lo) && (r.hi_open ? x < r.hi : x <= r.hi);
}

/// `range` narrowed to what T can hold, so an int field reports [1, 2147483647] rather than overflowing.
template <class T>
inline Range representable(Range r) {
  const double lo = static_cast<double>(std::numeric_limits<T>::min());
  const double hi = static_cast<double>(std::numeric_limits<T>::max());
  if (sizeof(T) < sizeof(int64_t) && r.lo < lo) r = {lo, r.hi, false, r.hi_open};
  if (sizeof(T) < sizeof(int64_t) && r.hi > hi) r = {r.lo, hi, r.lo_open, false};
  return r;
}

template <class T>
inline T read_integer(const std::string& at, const YAML::Node& node, const std::string& path, const Source& src,
                      const Range& range) {
  const auto value = node.IsScalar() ? to_integer(node.Scalar()) : std::nullopt;
  if (!value) type_error(at, node, path, src, "an integer");
  const Range r = representable<T>(range);
  if (!contains(r, static_cast<double>(*value))) {
    fail(fmt::format("{}: {} = {} is out of range {}", at, path, *value, format_range(r)));
  }
  return static_cast<T>(*value);
}

// ---- quoting ----

/// yaml-cpp reads a quoted scalar whose closing quote is missing up to the end of the text, swallowing every later
/// line into one string; reject that. `text` is what was parsed, `mark` where a scalar starts.
inline std::optional<std::string> unterminated_quote(std::string_view text, const YAML::Mark& mark) {
  if (mark.is_null() || mark.pos < 0 || static_cast<size_t>(mark.pos) >= text.size()) return std::nullopt;
  const char quote = text[static_cast<size_t>(mark.pos)];
  if (quote != '"' && quote != '\'') return std::nullopt;
  for (size_t i = static_cast<size_t>(mark.pos) + 1; i < text.size(); ++i) {
    if (quote == '"' && text[i] == '\\') {
      ++i;  // an escaped character, \" included
    } else if (text[i] == quote) {
      if (quote == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
        ++i;  // '' is a quote inside a single-quoted string
      } else {
        return std::nullopt;
      }
    }
  }
  return fmt::format("unterminated {} quote", quote == '"' ? "double" : "single");
}

/// Throws at the first scalar of `node` (keys included) that opens a quote and never closes it. `budget` bounds the
/// nodes visited: aliases share nodes, so a 500-byte file of nested anchors names 10^9 of them (an "alias bomb"),
/// and a config has a few hundred.
inline void check_quotes(const YAML::Node& node, std::string_view text, const std::string& where, int64_t& budget) {
  if (--budget < 0) {
    fail(fmt::format("{}: more than {} YAML nodes (nested aliases?); a config is a few hundred", where, kMaxYamlNodes));
  }
  if (node.IsScalar()) {
    if (const auto problem = unterminated_quote(text, node.Mark())) {
      fail(fmt::format("{}:{}:{}: malformed YAML: {}", where, node.Mark().line + 1, node.Mark().column + 1, *problem));
    }
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      check_quotes(entry.first, text, where, budget);
      check_quotes(entry.second, text, where, budget);
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) check_quotes(item, text, where, budget);
  }
}
inline void check_quotes(const YAML::Node& node, std::string_view text, const std::string& where) {
  int64_t budget = kMaxYamlNodes;
  check_quotes(node, text, where, budget);
}

// ---- visitors ----

template <class S>
void read_section(const YAML::Node& map, S& section, const std::string& prefix, const Source& src);

/// Parses the one field or section named `key` (if the visited struct has it) from `node`.
class FieldReader {
 public:
  FieldReader(std::string key, const YAML::Node& key_node, const YAML::Node& node, std::string path, const Source& src)
      // yaml-cpp marks an empty value at the next token, possibly lines later, so point at its key instead.
      : key_(std::move(key)),
        node_(node),
        path_(std::move(path)),
        src_(src),
        at_(src.at(node_.IsNull() ? key_node : node_)) {}

  bool found() const { return found_; }

  void field(std::string_view name, int& value, const Range& range) {
    if (take(name)) value = read_integer<int>(at_, node_, path_, src_, range);
  }
  void field(std::string_view name, int64_t& value, const Range& range) {
    if (take(name)) value = read_integer<int64_t>(at_, node_, path_, src_, range);
  }
  void field(std::string_view name, double& value, const Range& range) {
    if (!take(name)) return;
    const auto x = node_.IsScalar() ? to_number(node_.Scalar()) : std::nullopt;
    if (!x) type_error(at_, node_, path_, src_, "a number");
    // Every number ends up in float32 tensors or float32 arithmetic: beyond FLT_MAX it would silently become inf.
    if (std::fabs(*x) > FLT_MAX) {
      fail(fmt::format("{}: {} = {} is too large (float32 holds at most {:.4g})", at_, path_, *x, FLT_MAX));
    }
    if (!contains(range, *x)) {
      fail(fmt::format("{}: {} = {} is out of range {}", at_, path_, *x, format_range(range)));
    }
    value = *x;
  }
  void field(std::string_view name, bool& value) {
    if (!take(name)) return;
    const auto b = node_.IsScalar() ? to_bool(node_.Scalar()) : std::nullopt;
    if (!b) type_error(at_, node_, path_, src_, "true or false");
    value = *b;
  }
  void field(std::string_view name, std::string& value, const Choices& choices) {
    if (!take(name)) return;
    if (!node_.IsScalar()) type_error(at_, node_, path_, src_, "a string");
    const std::string& s = node_.Scalar();
    if (choices.values.empty() && s.empty()) fail(fmt::format("{}: {} must not be empty", at_, path_));
    if (!choices.values.empty() && std::find(choices.values.begin(), choices.values.end(), s) == choices.values.end()) {
      fail(fmt::format("{}: {} = '{}' is not one of {}", at_, path_, s, fmt::join(choices.values, ", ")));
    }
    value = s;
  }
  template <class E>
  void field(std::string_view name, E& value, const EnumChoices<E>& choices) {
    if (!take(name)) return;
    if (!node_.IsScalar()) type_error(at_, node_, path_, src_, "a string");
    for (const auto& [text, e] : choices.values) {
      if (text == node_.Scalar()) {
        value = e;
        return;
      }
    }
    std::vector<std::string_view> names;
    for (const auto& entry : choices.values) names.push_back(entry.first);
    fail(fmt::format("{}: {} = '{}' is not one of {}", at_, path_, node_.Scalar(), fmt::join(names, ", ")));
  }
  void field(std::string_view name, std::vector<int>& value, const Range& range) {
    if (!take(name)) return;
    if (!node_.IsSequence()) type_error(at_, node_, path_, src_, "a list of integers, like [64, 64]");
    std::vector<int> items;
    for (size_t i = 0; i < node_.size(); ++i) {
      const YAML::Node item = node_[i];
      items.push_back(read_integer<int>(src_.at(item), item, fmt::format("{}[{}]", path_, i), src_, range));
    }
    value = std::move(items);
  }
  template <class S>
  void section(std::string_view name, S& sub) {
    if (name != key_) return;
    found_ = true;
    read_section(node_, sub, path_, src_);
  }

 private:
  /// True when this is the field named by the YAML key; records where its value came from.
  bool take(std::string_view name) {
    if (name != key_) return false;
    found_ = true;
    if (src_.origins) (*src_.origins)[path_] = at_;
    return true;
  }

  std::string key_;
  YAML::Node node_;
  std::string path_;
  const Source& src_;
  std::string at_;  ///< where node_ is, for messages
  bool found_ = false;
};

/// Reads every key of a YAML map into `section`, in file order; keys the section does not declare are errors.
template <class S>
void read_section(const YAML::Node& map, S& section, const std::string& prefix, const Source& src) {
  if (!map || map.IsNull()) return;  // an empty section (or file) keeps every default
  if (!map.IsMap()) {
    if (prefix.empty()) fail(fmt::format("{}: expected a map of sections, got {}", src.at(map), describe(map)));
    fail(fmt::format("{}: {}: expected a map of keys, got {}", src.at(map), prefix, describe(map)));
  }
  std::map<std::string, int> first_line;
  for (const auto& entry : map) {
    const YAML::Node key_node = entry.first;  // copies of the handles: the iterator's pair is a temporary
    if (!key_node.IsScalar()) {
      fail(fmt::format("{}: expected a key name, got {}", src.at(key_node), describe(key_node)));
    }
    const std::string& key = key_node.Scalar();
    const std::string path = join(prefix, key);
    const auto [seen, fresh] = first_line.emplace(key, key_node.Mark().line + 1);
    if (!fresh) {
      fail(fmt::format("{}: duplicate key '{}' (first set on line {})", src.at(key_node), path, seen->second));
    }
    FieldReader reader(key, key_node, entry.second, path, src);
    section.visit(reader);
    if (!reader.found()) {
      if (const auto now = src.moved ? moved_to(path, *src.moved) : std::nullopt)
        fail(fmt::format("{}: {} is now {}", src.at(key_node), path, *now));
      fail(fmt::format("{}: unknown {} '{}'{}", src.at(key_node), prefix.empty() ? "section" : "key", path,
                       did_you_mean(path, src)));
    }
  }
}

/// Emits every field of the visited struct as YAML.
class Writer {
 public:
  explicit Writer(YAML::Emitter& out) : out_(out) {}

  template <class T, class... Check>
  void field(std::string_view name, const T& value, const Check&...) {
    out_ << YAML::Key << std::string(name) << YAML::Value;
    if constexpr (std::is_same_v<T, double>) {
      out_ << fmt::format("{}", value);  // shortest text that parses back to the same double
    } else if constexpr (std::is_same_v<T, std::vector<int>>) {
      out_ << YAML::Flow << YAML::BeginSeq;
      for (int x : value) out_ << x;
      out_ << YAML::EndSeq;
    } else {
      out_ << value;
    }
  }
  template <class E>
  void field(std::string_view name, const E& value, const EnumChoices<E>& choices) {
    out_ << YAML::Key << std::string(name) << YAML::Value << std::string(choices.name_of(value));
  }
  template <class S>
  void section(std::string_view name, S& sub) {
    out_ << YAML::Key << std::string(name) << YAML::Value << YAML::BeginMap;
    sub.visit(*this);
    out_ << YAML::EndMap;
  }

 private:
  YAML::Emitter& out_;
};

/// Lists every key path, sections included.
class KeyCollector {
 public:
  KeyCollector(std::string prefix, std::vector<std::string>& keys) : prefix_(std::move(prefix)), keys_(keys) {}

  template <class T, class... Check>
  void field(std::string_view name, const T&, const Check&...) {
    keys_.push_back(join(prefix_, name));
  }
  template <class S>
  void section(std::string_view name, S& sub) {
    keys_.push_back(join(prefix_, name));
    KeyCollector inner(keys_.back(), keys_);
    sub.visit(inner);
  }

 private:
  std::string prefix_;
  std::vector<std::string>& keys_;
};

/// Collects every field's value as YAML text, keyed by path.
class ValueCollector {
 public:
  ValueCollector(std::string prefix, std::map<std::string, std::string>& values)
      : prefix_(std::move(prefix)), values_(values) {}

  template <class T, class... Check>
  void field(std::string_view name, const T& value, const Check&...) {
    if constexpr (std::is_same_v<T, std::vector<int>>) {
      values_[join(prefix_, name)] = fmt::format("[{}]", fmt::join(value, ", "));
    } else if constexpr (std::is_same_v<T, bool>) {
      values_[join(prefix_, name)] = value ? "true" : "false";
    } else {
      values_[join(prefix_, name)] = fmt::format("{}", value);  // doubles: the shortest text that reads back exactly
    }
  }
  template <class E>
  void field(std::string_view name, const E& value, const EnumChoices<E>& choices) {
    values_[join(prefix_, name)] = std::string(choices.name_of(value));
  }
  template <class S>
  void section(std::string_view name, S& sub) {
    ValueCollector inner(join(prefix_, name), values_);
    sub.visit(inner);
  }

 private:
  std::string prefix_;
  std::map<std::string, std::string>& values_;
};

/// Calls check(CheckContext) on every section of the visited struct that declares one, outermost first, each with
/// its own path: a struct that appears twice (model.memory, model.off_policy.actor_memory) is checked at both places.
class SectionChecker {
 public:
  SectionChecker(std::string prefix, const Report& report) : prefix_(std::move(prefix)), report_(report) {}

  template <class T, class... Check>
  void field(std::string_view, const T&, const Check&...) {}
  template <class S>
  void section(std::string_view name, S& sub) {
    SectionChecker inner(join(prefix_, name), report_);
    if constexpr (requires(const S& s, const CheckContext& context) { s.check(context); }) {
      sub.check(CheckContext{inner.prefix_, report_});
    }
    sub.visit(inner);
  }

 private:
  std::string prefix_;
  const Report& report_;
};

/// Runs the check() of every section of `root` (SectionChecker).
template <class Root>
void check_sections(const Root& root, const Report& report) {
  Root copy = root;  // visit() is non-const
  SectionChecker checker("", report);
  copy.visit(checker);
}

// ---- whole documents ----

inline YAML::Node nest(const std::vector<std::string>& path, size_t i, const YAML::Node& leaf) {
  if (i == path.size()) return leaf;
  YAML::Node map(YAML::NodeType::Map);
  map[path[i]] = nest(path, i + 1, leaf);
  return map;
}

/// Applies one "key.path=value" token: the value is wrapped as {key: {path: value}} and read like a file.
template <class Root>
void apply_override(Root& config, const std::string& token, std::map<std::string, std::string>& origins,
                    const std::vector<std::string>& known, const std::vector<KeyMove>& moved) {
  const size_t eq = token.find('=');
  if (eq == std::string::npos) {
    const std::string key = trim(token);
    const bool is_known = std::find(known.begin(), known.end(), key) != known.end();
    const auto hint = is_known ? std::optional<std::string>(key) : config_detail::suggest_key(key, known);
    fail(fmt::format("command line: {}: expected key.path=value{}", shown_token(token),
                     hint ? fmt::format(" (did you mean '{}=...'?)", *hint) : std::string()));
  }
  const std::string key = trim(std::string_view(token).substr(0, eq));
  if (std::find(known.begin(), known.end(), key) == known.end()) {
    if (const auto now = moved_to(key, moved))
      fail(fmt::format("command line: {}: {} is now {}", shown_token(token), key, *now));
    fail(fmt::format("command line: {}: unknown key '{}'{}", shown_token(token), key, did_you_mean(key, known)));
  }
  YAML::Node value;
  const std::string text = token.substr(eq + 1);
  try {
    value = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail(fmt::format("command line: {}: malformed YAML value: {}", shown_token(token), e.msg));
  }
  try {
    check_quotes(value, text, "");
  } catch (const ConfigError&) {
    fail(fmt::format("command line: {}: malformed YAML value: unterminated quote", shown_token(token)));
  }
  read_section(nest(split(key, '.'), 0, value), config, "", Source{token, true, key, &origins, &known, &moved});
}

/// Every key path of Root, sections included, in declaration order.
template <class Root>
std::vector<std::string> keys_of() {
  std::vector<std::string> out;
  Root defaults;
  KeyCollector collector("", out);
  defaults.visit(collector);
  return out;
}

/// Every field's key path and its value as YAML text.
template <class Root>
std::map<std::string, std::string> values_of(const Root& root) {
  std::map<std::string, std::string> values;
  Root copy = root;
  ValueCollector collector("", values);
  copy.visit(collector);
  return values;
}

/// The one YAML document of `yaml_text` (several documents, a malformed one or an unterminated quote are errors).
inline YAML::Node load_document(const std::string& yaml_text, const std::string& source_name) {
  YAML::Node root;
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(yaml_text);
    if (documents.size() > 1) {
      const YAML::Mark second = documents[1].Mark();
      fail(fmt::format("{}{}: holds {} YAML documents ('---' starts another); a config is one document", source_name,
                       second.is_null() ? std::string() : fmt::format(":{}", second.line + 1), documents.size()));
    }
    if (!documents.empty()) root = documents[0];
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) fail(fmt::format("{}: malformed YAML: {}", source_name, e.msg));
    fail(fmt::format("{}:{}:{}: malformed YAML: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  check_quotes(root, yaml_text, source_name);
  return root;
}

/// Checks that involve more than one field: check(root, origins, report) calls report(keys, message) for a problem
/// (Report: core/config_schema.hpp).
template <class Root>
using CrossCheck = std::function<void(const Root&, const ConfigOrigins&, const Report&)>;

/// Reads `yaml_text` into a Root, applies the overrides, runs the cross-field check. A key in `moved` is refused
/// with its new place.
template <class Root>
Root parse_root(const std::string& yaml_text, const std::string& source_name, const std::vector<std::string>& overrides,
                ConfigOrigins* origins_out, const CrossCheck<Root>& check, const std::vector<KeyMove>& moved = {}) {
  static const std::vector<std::string> known = keys_of<Root>();
  const YAML::Node document = load_document(yaml_text, source_name);
  Root root;
  ConfigOrigins origins;
  read_section(document, root, "", Source{source_name, false, "", &origins, &known, &moved});
  for (const std::string& token : overrides) apply_override(root, token, origins, known, moved);
  if (check) {
    check(root, origins, [&](std::initializer_list<std::string_view> keys, const std::string& message) {
      for (std::string_view key : keys) {
        const auto it = origins.find(std::string(key));
        if (it != origins.end()) fail(fmt::format("{}: {}", it->second, message));
      }
      fail(fmt::format("{}: {}", source_name, message));
    });
  }
  if (origins_out) *origins_out = std::move(origins);
  return root;
}

/// Every key written, a blank line between sections, for the reader of a run folder's config.yaml.
template <class Root>
std::string to_yaml_text(const Root& root) {
  YAML::Emitter out;
  Root copy = root;  // visit() is non-const: one declaration serves reading and writing
  Writer writer(out);
  out << YAML::BeginMap;
  copy.visit(writer);
  out << YAML::EndMap;
  std::string text;
  for (const std::string& line : split(out.c_str(), '\n')) {
    if (!text.empty() && !line.empty() && line[0] != ' ') text += '\n';
    text += line + '\n';
  }
  return text;
}

}  // namespace rlm::config_reader
