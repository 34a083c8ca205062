// Collecting a sweep's results; see sweep_collect.hpp.
#include "sweep/sweep_collect.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "sweep/sweep_files.hpp"

namespace rlm::sweep {
namespace fs = std::filesystem;
namespace {

constexpr const char* kEvalReturn = "eval/episode_return_mean";
constexpr const char* kTrainReturn = "charts/episode_return_mean";

struct Series {
  std::vector<std::pair<int64_t, double>> points;  ///< (step, value), finite values only
};

/// Every finite value of each tag in a metrics.jsonl. A last line cut short by a crash is skipped (the logger may
/// be stopped mid-row); any other malformed line is an error.
std::map<std::string, Series> read_metrics(const fs::path& file) {
  std::map<std::string, Series> out;
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(std::move(line));
  for (size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(lines[i]);
    } catch (const nlohmann::json::exception&) {
      if (i + 1 == lines.size()) break;
      throw UsageError(fmt::format("{}:{}: not a JSON metrics row", file.string(), i + 1));
    }
    if (!row.is_object() || !row.contains("step") || !row["step"].is_number())
      throw UsageError(fmt::format("{}:{}: a metrics row without a step", file.string(), i + 1));
    const auto step = row["step"].get<int64_t>();
    for (const auto& [tag, value] : row.items()) {
      if (tag == "step" || !value.is_number()) continue;
      const double v = value.get<double>();
      if (std::isfinite(v)) out[tag].points.emplace_back(step, v);
    }
  }
  return out;
}

std::string swept_text(const std::vector<std::pair<std::string, std::string>>& swept) {
  std::string out;
  for (const auto& [key, value] : swept) out += (out.empty() ? "" : " ") + key + "=" + value;
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::vector<RunResult> collect_runs(const fs::path& sweep_dir, const std::vector<SweepRun>& runs,
                                    const std::string& metric) {
  std::vector<RunResult> out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& run : runs) {
    RunResult r{run, "missing", "", metric, 0, 0, nan, nan};
    const fs::path dir = sweep_dir / "runs" / run.id;
    std::map<std::string, Series> series;
    if (fs::exists(dir / "metrics.jsonl")) {
      try {
        series = read_metrics(dir / "metrics.jsonl");
      } catch (const UsageError& e) {  // one bad file costs its run, not the table
        r.status = "corrupt";
        r.problem = e.what();
        if (r.metric.empty()) r.metric = kTrainReturn;
        out.push_back(std::move(r));
        continue;
      }
      if (r.metric.empty()) r.metric = series.contains(kEvalReturn) ? kEvalReturn : kTrainReturn;
      if (const auto it = series.find(r.metric); it != series.end()) {
        const auto& points = it->second.points;
        r.values = static_cast<int64_t>(points.size());
        r.last_step = points.back().first;
        r.final_value = points.back().second;
        r.best_value = points.front().second;
        for (const auto& [step, value] : points) r.best_value = std::max(r.best_value, value);
      }
      r.status = "partial";
    }
    if (r.metric.empty()) r.metric = kTrainReturn;
    if (fs::exists(dir / "done.json")) {
      r.status = series.empty() ? "corrupt" : "finished";
      if (series.empty())
        r.problem = fmt::format("{}: finished (done.json) but without a metrics row", (dir / "metrics.jsonl").string());
    } else if (fs::exists(dir / "failed.json")) {
      r.status = "failed";
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<GroupResult> group_results(const std::vector<RunResult>& results) {
  std::vector<GroupResult> groups;
  std::vector<std::vector<const RunResult*>> members;
  for (const auto& r : results) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const GroupResult& g) {
      return g.config_label == r.run.config_label && g.swept == r.run.swept && g.metric == r.metric;
    });
    if (it == groups.end()) {
      GroupResult g;
      g.config_label = r.run.config_label;
      g.swept = r.run.swept;
      g.metric = r.metric;
      groups.push_back(std::move(g));
      members.emplace_back();
      it = groups.end() - 1;
    }
    members[static_cast<size_t>(it - groups.begin())].push_back(&r);
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<double> finals, bests;
    int64_t min_step = std::numeric_limits<int64_t>::max();
    for (const RunResult* r : members[g]) {
      ++groups[g].runs;
      if (r->values == 0) continue;
      finals.push_back(r->final_value);
      bests.push_back(r->best_value);
      min_step = std::min(min_step, r->last_step);
    }
    groups[g].seeds = static_cast<int>(finals.size());
    groups[g].final_mean = mean_of(finals);
    groups[g].final_std = sample_std(finals);
    groups[g].best_mean = mean_of(bests);
    groups[g].best_std = sample_std(bests);
    groups[g].last_step_min = finals.empty() ? 0 : min_step;
  }
  return groups;
}

std::string groups_csv(const std::vector<GroupResult>& groups) {
  std::string out = "config,swept,metric,seeds,runs,final_mean,final_std,best_mean,best_std,min_env_steps\n";
  for (const auto& g : groups)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", csv_field(g.config_label), csv_field(swept_text(g.swept)),
                       csv_field(g.metric), g.seeds, g.runs, table_number(g.final_mean), table_number(g.final_std),
                       table_number(g.best_mean), table_number(g.best_std), g.last_step_min);
  return out;
}

std::string groups_markdown(const std::vector<GroupResult>& groups) {
  std::string out =
      "| config | swept | metric | seeds | final (mean ± std) | best (mean ± std) | env steps (min) |\n"
      "|---|---|---|---|---|---|---|\n";
  const auto pm = [](double m, double s) {
    return std::isfinite(m) ? fmt::format("{:.4g} ± {:.2g}", m, s) : std::string("–");
  };
  for (const auto& g : groups)
    out += fmt::format("| {} | {} | {} | {}/{} | {} | {} | {} |\n", g.config_label, swept_text(g.swept), g.metric,
                       g.seeds, g.runs, pm(g.final_mean, g.final_std), pm(g.best_mean, g.best_std), g.last_step_min);
  return out;
}

std::string runs_csv(const std::vector<RunResult>& results) {
  std::string out = "index,id,config,swept,seed,status,metric,env_steps,values,final,best\n";
  for (const auto& r : results)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", r.run.index, csv_field(r.run.id),
                       csv_field(r.run.config_label), csv_field(swept_text(r.run.swept)), r.run.seed, r.status,
                       csv_field(r.metric), r.last_step, r.values, table_number(r.final_value),
                       table_number(r.best_value));
  return out;
}

}  // namespace rlm::sweep
