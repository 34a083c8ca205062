#include "app/arguments.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace rlm::app {

std::optional<std::string> ParsedArgs::get(const std::string& name) const {
  for (const auto& [k, v] : options)
    if (k == name) return v;
  return std::nullopt;
}

bool ParsedArgs::has(const std::string& name) const { return get(name).has_value(); }

ParsedArgs parse_args(const Args& args, const std::vector<std::string>& flags_with_value,
                      const std::vector<std::string>& switches, bool allow_overrides) {
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  ParsedArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.starts_with("--")) {
      const std::string name = a.substr(2);
      if (out.has(name)) throw UsageError("option " + a + " is given twice");
      if (contains(switches, name)) {
        out.options.emplace_back(name, "");
      } else if (contains(flags_with_value, name)) {
        if (i + 1 >= args.size()) throw UsageError("option " + a + " needs a value");
        out.options.emplace_back(name, args[++i]);
      } else {
        throw UsageError("unknown option '" + a + "'");
      }
    } else if (allow_overrides && a.find('=') != std::string::npos) {
      out.overrides.push_back(a);
    } else {
      throw UsageError("unexpected argument '" + a + "'" +
                       (allow_overrides ? " (overrides look like key.path=value)" : ""));
    }
  }
  return out;
}

}  // namespace rlm::app
