// Did-you-mean hints for unknown config keys (see config_suggest.hpp).
#include "core/config_suggest.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace rlm::config_detail {

std::string join(std::string_view prefix, std::string_view key) {
  return prefix.empty() ? std::string(key) : fmt::format("{}.{}", prefix, key);
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

namespace {

/// "lerning_rate" -> "lr": abbreviations are far in edit distance but obvious to a reader.
std::string initials(std::string_view word) {
  std::string out;
  for (const std::string& part : split(word, '_')) {
    if (!part.empty()) out += part[0];
  }
  return out.size() >= 2 ? out : std::string();
}

/// The candidate nearest to `word`: a small edit distance first, then an abbreviation or prefix match.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::pair<int, size_t> best_score{2, 0};  // (kind, distance); kind 0: edit distance, 1: abbreviation/prefix
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, c);
    const size_t limit = std::max<size_t>(1, std::max(word.size(), c.size()) / 3);
    const size_t shorter = std::min(word.size(), c.size());
    const bool prefix = shorter >= 3 && (word.starts_with(c) || std::string_view(c).starts_with(word));
    const std::string word_initials = initials(word), c_initials = initials(c);
    const bool abbreviation =
        (!word_initials.empty() && word_initials == c) || (!c_initials.empty() && c_initials == word);
    std::pair<int, size_t> score{2, 0};
    if (d <= limit) {
      score = {0, d};
    } else if (prefix || abbreviation) {
      score = {1, d};
    }
    if (score < best_score) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

std::string parent_of(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? std::string() : path.substr(0, dot);
}

std::string last_segment(const std::string& path) {
  const size_t dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

}  // namespace

std::optional<std::string> suggest_key(const std::string& unknown, const std::vector<std::string>& known) {
  auto is_known = [&](const std::string& p) { return std::find(known.begin(), known.end(), p) != known.end(); };
  auto names_under = [&](const std::string& parent) {
    std::vector<std::string> names;
    for (const std::string& k : known) {
      if (parent_of(k) == parent) names.push_back(last_segment(k));
    }
    return names;
  };
  // 1. A typo in the same section: replace each unknown segment by its nearest sibling.
  std::string fixed;
  bool walked = true;
  for (const std::string& segment : split(unknown, '.')) {
    std::string next = join(fixed, segment);
    if (!is_known(next)) {
      const auto sibling = closest(segment, names_under(fixed));
      if (!sibling) {
        walked = false;
        break;
      }
      next = join(fixed, *sibling);
    }
    fixed = next;
  }
  if (walked && fixed != unknown) return fixed;
  // 2. The right key in the wrong place: memory.type -> model.memory.type, algo.seed -> experiment.seed.
  for (const std::string& k : known) {
    if (k.ends_with("." + unknown)) return k;
  }
  const std::string leaf = last_segment(unknown);
  for (const std::string& k : known) {
    if (last_segment(k) == leaf && k != unknown) return k;
  }
  // 3. A typo of a key in another section.
  std::vector<std::string> leaves;
  leaves.reserve(known.size());
  for (const std::string& k : known) leaves.push_back(last_segment(k));
  if (const auto near = closest(leaf, leaves)) {
    for (const std::string& k : known) {
      if (last_segment(k) == *near) return k;
    }
  }
  return std::nullopt;
}

}  // namespace rlm::config_detail
