// Published numbers beside ours; see reproduction.hpp.
#include "sweep/reproduction.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "core/error.hpp"
#include "sweep/sweep_files.hpp"

namespace rlm::sweep {
namespace fs = std::filesystem;
namespace {

double number(const fs::path& file, const YAML::Node& node, const std::string& key) {
  try {
    return node.as<double>();
  } catch (const YAML::Exception&) {
    fail_at(file, node, key, "is not a number");
  }
}

/// A scalar's text ("title: []" or a missing value is refused with file:line and key).
std::string text(const fs::path& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) fail_at(file, node, key, "must be a text (a single value)");
  return node.Scalar();
}

/// [mean, spread], or [mean] for a number printed without an error bar.
PublishedValue published(const fs::path& file, const YAML::Node& node, const std::string& key) {
  if (!node.IsSequence() || node.size() < 1 || node.size() > 2)
    fail_at(file, node, key, "must be [mean, spread] or [mean]");
  PublishedValue v{number(file, node[0], key), 0, node.size() == 2};
  if (v.has_spread) v.spread = number(file, node[1], key);
  if (v.spread < 0) fail_at(file, node[1], key, "an error bar cannot be negative");
  return v;
}

/// numpy.percentile's default (linear) on sorted values.
double percentile(const std::vector<double>& sorted, double q) {
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

/// Our mean against the published mean ± spread; a number without an error bar against our IQM's 95% interval.
std::string verdict_of(const ReproductionRow& row) {
  const auto& p = row.published;
  if (!p) return "no published number";
  if (p->has_spread) {
    if (row.mean < p->mean - p->spread) return "below";
    if (row.mean > p->mean + p->spread) return "above";
  } else {
    if (row.ci_high < p->mean) return "below";
    if (row.ci_low > p->mean) return "above";
  }
  return "inside";
}

/// The row's spread in the table's kind: the sample std, or the standard error std/√n.
double spread_of(const PaperTable& table, double std, size_t n) {
  return table.spread == "se" && n > 0 ? std / std::sqrt(static_cast<double>(n)) : std;
}

}  // namespace

PaperTable load_paper_table(const fs::path& file) {
  PaperTable t;
  t.file = file;
  const YAML::Node root = load_yaml_file(file, "paper table");
  if (!root.IsMap()) throw ConfigError(fmt::format("{}: a paper table is a mapping", file.string()));
  for (const auto& item : root) {
    const auto key = item.first.as<std::string>();
    const YAML::Node v = item.second;
    if (key == "id") {
      t.id = text(file, v, key);
    } else if (key == "title") {
      t.title = text(file, v, key);
    } else if (key == "source") {
      if (!v.IsMap()) fail_at(file, v, key, "must be {paper, table, page}");
      t.source_paper = v["paper"] ? text(file, v["paper"], "source.paper") : "";
      t.source_table = v["table"] ? text(file, v["table"], "source.table") : "";
      t.source_page = v["page"] ? text(file, v["page"], "source.page") : "";
    } else if (key == "sweep") {
      const std::string name = text(file, v, key);
      if (name.empty()) fail_at(file, v, key, "must name the table's sweep file");
      t.sweep = (file.parent_path() / name).lexically_normal();
      std::error_code ec;
      if (fs::is_directory(t.sweep, ec))
        fail_at(file, v, key, fmt::format("'{}' is a folder, not a sweep file ({})", name, t.sweep.string()));
    } else if (key == "metric") {
      t.metric = text(file, v, key);
    } else if (key == "statistic") {
      t.statistic = text(file, v, key);
      if (t.statistic != "final" && t.statistic != "best") fail_at(file, v, key, "must be final or best");
    } else if (key == "scale") {
      t.scale = number(file, v, key);
      if (!std::isfinite(t.scale) || t.scale <= 0) fail_at(file, v, key, "must be a finite number above 0");
    } else if (key == "spread") {
      t.spread = text(file, v, key);
      if (t.spread != "std" && t.spread != "se") fail_at(file, v, key, "must be std or se (standard error)");
    } else if (key == "decimals") {
      const double d = number(file, v, key);
      if (d < 0 || d > 6 || d != std::floor(d)) fail_at(file, v, key, "must be a whole number from 0 to 6");
      t.decimals = static_cast<int>(d);
    } else if (key == "cells") {
      if (!v.IsMap()) fail_at(file, v, key, "must map sweep config labels to [mean, spread], [mean] or null");
      for (const auto& c : v) {
        const auto label = text(file, c.first, "cells");
        if (c.second.IsNull()) {
          t.cells.emplace_back(label, std::nullopt);
        } else {
          t.cells.emplace_back(label, published(file, c.second, "cells." + label));
        }
      }
    } else if (key == "aggregates") {
      if (!v.IsSequence()) fail_at(file, v, key, "must be a list of {name, cells, mean, spread}");
      for (const auto& a : v) {
        if (!a.IsMap() || !a["name"] || !a["cells"] || !a["mean"] || !a["spread"])
          fail_at(file, a, key, "each aggregate needs name, cells (a label prefix), mean and spread");
        t.aggregates.push_back({text(file, a["name"], key + ".name"),
                                text(file, a["cells"], key + ".cells"),
                                {number(file, a["mean"], key), number(file, a["spread"], key)}});
      }
    } else {
      fail_at(file, item.first, key,
              "unknown key (a paper table takes id, title, source, sweep, metric, statistic, scale, spread, decimals, "
              "cells, aggregates)");
    }
  }
  if (t.id.empty()) fail_at(file, root, "id", "is missing");
  if (t.sweep.empty()) fail_at(file, root, "sweep", "is missing");
  if (t.cells.empty()) fail_at(file, root, "cells", "is missing");
  return t;
}

double interquartile_mean(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t cut = values.size() / 4;  // int(0.25 · n)
  double s = 0;
  for (size_t i = cut; i < values.size() - cut; ++i) s += values[i];
  return s / static_cast<double>(values.size() - 2 * cut);
}

std::pair<double, double> iqm_confidence_interval(const std::vector<std::vector<double>>& strata, int resamples,
                                                  uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> iqms;
  std::vector<double> pooled;
  for (int b = 0; b < resamples; ++b) {
    pooled.clear();
    for (const auto& s : strata) {
      if (s.empty()) continue;
      std::uniform_int_distribution<size_t> pick(0, s.size() - 1);
      for (size_t i = 0; i < s.size(); ++i) pooled.push_back(s[pick(rng)]);
    }
    if (pooled.empty()) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    iqms.push_back(interquartile_mean(pooled));
  }
  std::sort(iqms.begin(), iqms.end());
  return {percentile(iqms, 2.5), percentile(iqms, 97.5)};
}

std::vector<ReproductionRow> reproduction_rows(const PaperTable& table, const std::vector<RunResult>& results) {
  // Each cell's values by seed: the run's final or best value × scale.
  std::map<std::string, std::map<int64_t, double>> by_cell;
  for (const auto& r : results) {
    // Finished runs only: a run still training has no final value yet.
    if (r.status != "finished" || r.values == 0 || r.metric != table.metric) continue;
    const double v = (table.statistic == "best" ? r.best_value : r.final_value) * table.scale;
    by_cell[r.run.config_label][r.run.seed] = v;
  }
  std::vector<ReproductionRow> rows;
  for (const auto& [label, pub] : table.cells) {
    ReproductionRow row;
    row.name = label;
    row.published = pub;
    std::vector<double> values;
    if (const auto it = by_cell.find(label); it != by_cell.end())
      for (const auto& [seed, v] : it->second) values.push_back(v);
    row.runs = static_cast<int>(values.size());
    if (values.empty()) {
      row.verdict = "not run";
      rows.push_back(row);
      continue;
    }
    row.mean = mean_of(values);
    row.std = sample_std(values);
    row.spread = spread_of(table, row.std, values.size());
    row.iqm = interquartile_mean(values);
    std::tie(row.ci_low, row.ci_high) = iqm_confidence_interval({values});
    row.verdict = verdict_of(row);
    rows.push_back(row);
  }
  for (const auto& agg : table.aggregates) {
    ReproductionRow row;
    row.name = agg.name;
    row.aggregate = true;
    row.published = agg.published;
    std::vector<std::vector<double>> strata;
    std::map<int64_t, std::vector<double>> per_seed;
    size_t cells = 0, complete = 0;
    for (const auto& [label, pub] : table.cells) {
      if (!label.starts_with(agg.prefix)) continue;
      ++cells;
      const auto it = by_cell.find(label);
      if (it == by_cell.end()) continue;
      ++complete;
      std::vector<double> values;
      for (const auto& [seed, v] : it->second) {
        values.push_back(v);
        per_seed[seed].push_back(v);
      }
      strata.push_back(std::move(values));
    }
    if (complete < cells || cells == 0) {  // an average over some of its cells would not be the paper's number
      row.verdict = fmt::format("not run ({} of {} cells)", complete, cells);
      rows.push_back(row);
      continue;
    }
    std::vector<double> seed_means, pooled;
    for (const auto& [seed, values] : per_seed)
      if (values.size() == cells) seed_means.push_back(mean_of(values));
    for (const auto& s : strata) pooled.insert(pooled.end(), s.begin(), s.end());
    row.runs = static_cast<int>(pooled.size());
    row.mean = mean_of(seed_means);
    row.std = sample_std(seed_means);
    row.spread = spread_of(table, row.std, seed_means.size());
    row.iqm = interquartile_mean(pooled);
    std::tie(row.ci_low, row.ci_high) = iqm_confidence_interval(strata);
    row.verdict = seed_means.empty() ? "no seed ran every cell" : verdict_of(row);
    rows.push_back(row);
  }
  return rows;
}

std::string reproduction_markdown(const PaperTable& table, const std::vector<ReproductionRow>& rows, double budget,
                                  int seeds) {
  const int d = table.decimals;
  const auto num = [d](double v) { return fmt::format("{:.{}f}", v, d); };
  const std::string spread = table.spread == "se" ? "s.e." : "std";
  std::string out = fmt::format("# {}\n\n", table.title.empty() ? table.id : table.title);
  out += fmt::format(
      "Source: {}; {}{}.\n\nOurs: `{}`, {} value of each run × {}; {} seed(s); budget {} of each config's "
      "algo.total_steps. Verdict: our mean inside the paper's mean ± {} or not; a published number without an error "
      "bar is compared with our IQM's 95% interval.\n\n",
      table.source_paper, table.source_table, table.source_page.empty() ? "" : "; " + table.source_page, table.metric,
      table.statistic == "best" ? "the best (maximum)" : "the final", fmt::format("{:g}", table.scale), seeds,
      fmt::format("{:g}", budget), spread);
  out += fmt::format("| cell | ours: mean ± {0} | ours: IQM [95% CI] | runs | paper: mean ± {0} | verdict |\n", spread);
  out += "|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const std::string name = r.aggregate ? "**" + r.name + "**" : r.name;
    std::string paper = "–";
    if (r.published)
      paper =
          r.published->has_spread ? num(r.published->mean) + " ± " + num(r.published->spread) : num(r.published->mean);
    if (r.runs == 0) {
      out += fmt::format("| {} | – | – | 0 | {} | {} |\n", name, paper, r.verdict);
      continue;
    }
    out += fmt::format("| {} | {} ± {} | {} [{}, {}] | {} | {} | {} (budget {:g}) |\n", name, num(r.mean),
                       num(r.spread), num(r.iqm), num(r.ci_low), num(r.ci_high), r.runs, paper, r.verdict, budget);
  }
  return out;
}

std::string reproduction_csv(const PaperTable& table, const std::vector<ReproductionRow>& rows, double budget) {
  std::string out =
      "cell,aggregate,runs,mean,std,spread,iqm,iqm_ci_low,iqm_ci_high,paper_mean,paper_spread,spread_kind,verdict,"
      "budget\n";
  for (const auto& r : rows) {
    const bool has = r.runs > 0;
    const auto value = [has](double v) { return has ? table_number(v) : std::string(); };
    const bool paper_spread = r.published && r.published->has_spread;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:g}\n", r.name, r.aggregate ? 1 : 0, r.runs,
                       value(r.mean), value(r.std), value(r.spread), value(r.iqm), value(r.ci_low), value(r.ci_high),
                       r.published ? table_number(r.published->mean) : "",
                       paper_spread ? table_number(r.published->spread) : "", table.spread, r.verdict, budget);
  }
  return out;
}

}  // namespace rlm::sweep
