// `rlm reproduce <paper>/<table>`: runs the sweep of a paper table (configs/repro/<folder>/paper.yaml names it) as
// `rlm sweep` does, locally or as a Slurm array, then writes our numbers beside the paper's (sweep/reproduction.hpp)
// and draws each cell's learning curves. --budget F scales every run's algo.total_steps, --seeds N and --cells pick
// a smaller version; each budget gets a folder of its own.
#include <fmt/format.h>
#include <sys/wait.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "agents/experiment_config.hpp"
#include "app/arguments.hpp"
#include "app/commands.hpp"
#include "app/source_dir.hpp"
#include "app/subprocess.hpp"
#include "app/sweep_runner.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "sweep/reproduction.hpp"
#include "sweep/sweep_collect.hpp"

namespace rlm::app {
namespace fs = std::filesystem;
namespace {

std::vector<fs::path> paper_table_files() {
  const fs::path repro = source_dir() / "configs" / "repro";
  std::vector<fs::path> files;
  if (fs::is_directory(repro))
    for (const auto& entry : fs::directory_iterator(repro))
      if (fs::exists(entry.path() / "paper.yaml")) files.push_back(entry.path() / "paper.yaml");
  std::sort(files.begin(), files.end());
  return files;
}

/// The table `id` names. Only its own file is read in full, so a worker is not stopped by another table's file.
sweep::PaperTable find_paper_table(const std::string& id) {
  std::string known, unreadable;
  for (const auto& file : paper_table_files()) {
    std::string its_id;
    try {
      const YAML::Node root = YAML::LoadFile(file.string());
      if (root.IsMap() && root["id"] && root["id"].IsScalar()) its_id = root["id"].Scalar();
    } catch (const YAML::ParserException& e) {
      // Its id cannot be read, so it may be the table asked for: if no other file matches, its error is the answer.
      if (unreadable.empty())
        unreadable = fmt::format("{}:{}: malformed YAML: {}", file.string(), e.mark.line + 1, e.msg);
      continue;
    }
    if (its_id == id) return sweep::load_paper_table(file);
    known += (known.empty() ? "" : ", ") + its_id;
  }
  if (!unreadable.empty())
    throw ConfigError(fmt::format("{} (no other paper table is '{}'; known: {})", unreadable, id, known));
  throw UsageError(fmt::format("no paper table '{}' (known: {})", id, known));
}

/// Draws the learning curves of each cell's runs with scripts/plot_runs.py, when the project's Python is known.
void plot_cells(const sweep::PaperTable& table, const SweepJob& job, const fs::path& out) {
  const char* python = std::getenv("RLM_PYTHON");
  const fs::path script = source_dir() / "scripts" / "plot_runs.py";
  if (!python || !*python || !fs::exists(python) || !fs::exists(script)) {
    fmt::print("[reproduce] no learning curves: run through ./rlm (it sets RLM_PYTHON) to draw them\n");
    return;
  }
  std::map<std::string, std::vector<std::string>> dirs;
  for (const auto& run : job.runs) {
    const fs::path d = job.dir / "runs" / run.id;
    if (fs::exists(d / "metrics.jsonl")) dirs[run.config_label].push_back(d.string());
  }
  for (const auto& [label, runs] : dirs) {
    std::vector<std::string> command = {python, script.string()};
    command.insert(command.end(), runs.begin(), runs.end());
    command.insert(command.end(), {"--out", (out / "curves" / sweep::safe_name(label)).string(), "--metrics",
                                   table.metric, "--group-by", "none"});
    if (const int status = run_and_wait(command, {.discard_stdout = true}); status != 0)
      fmt::print("[reproduce] drawing the curves of {} failed (exit {})\n", label, status);
  }
  fmt::print("[reproduce] learning curves in {}/curves/<cell>/\n", out.string());
}

int report(const sweep::PaperTable& table, const SweepJob& job, double budget) {
  const auto results = sweep::collect_runs(job.dir, job.runs, table.metric);
  for (const auto& r : results)
    if (r.status == "corrupt") fmt::print("[reproduce] left out {}: {}\n", r.run.id, r.problem);
  // The rows of the cells this job runs (all, or those --cells picked); aggregates always average the paper's
  // cells and say how many of them ran.
  auto rows = sweep::reproduction_rows(table, results);
  std::erase_if(rows, [&](const sweep::ReproductionRow& row) {
    return !row.aggregate && std::none_of(job.runs.begin(), job.runs.end(),
                                          [&](const sweep::SweepRun& r) { return r.config_label == row.name; });
  });
  const std::string markdown =
      sweep::reproduction_markdown(table, rows, budget, static_cast<int>(job.spec.seeds.size()));
  write_file_atomic(job.dir / "reproduction.md", markdown);
  write_file_atomic(job.dir / "reproduction.csv", sweep::reproduction_csv(table, rows, budget));
  write_file_atomic(job.dir / "runs.csv", sweep::runs_csv(results));
  plot_cells(table, job, job.dir);
  fmt::print("{}\n[reproduce] wrote {}/reproduction.md and reproduction.csv\n", markdown, job.dir.string());
  return 0;
}

}  // namespace

int reproduce_command(const Args& raw_args) {
  std::optional<fs::path> emit_dir;
  const Args args = split_emit(raw_args, emit_dir);
  std::vector<std::string> flags = kRunnerFlags, switches = kRunnerSwitches;
  flags.insert(flags.end(), {"budget", "seeds", "cells", "out"});
  switches.insert(switches.end(), {"collect", "list"});
  // The table id is the one argument without a dash.
  Args rest;
  std::optional<std::string> id;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool value_of_flag = i > 0 && args[i - 1].starts_with("--") &&
                               std::find(flags.begin(), flags.end(), args[i - 1].substr(2)) != flags.end();
    if (!id && !args[i].starts_with("-") && !value_of_flag) {
      id = args[i];
      continue;
    }
    rest.push_back(args[i]);
  }
  const auto parsed = parse_args(rest, flags, switches, /*allow_overrides=*/false);
  if (parsed.has("list") || !id) {
    if (!id && !parsed.has("list")) fmt::print(stderr, "usage: rlm reproduce <paper>/<table> [options]; tables:\n");
    for (const auto& file : paper_table_files()) {
      const auto t = sweep::load_paper_table(file);
      fmt::print("  {:<14} {}\n", t.id, t.title);
    }
    return id || parsed.has("list") ? 0 : 2;
  }
  const sweep::PaperTable table = find_paper_table(*id);

  SweepJob job;
  job.spec = sweep::load_sweep(table.sweep);
  apply_slurm_flags(parsed, job.spec.slurm);
  double budget = 1.0;
  if (const auto b = parsed.get("budget")) {
    char* end = nullptr;
    budget = std::strtod(b->c_str(), &end);
    if (end == b->c_str() || *end != '\0' || !(budget > 0 && budget <= 1))
      throw UsageError(fmt::format("--budget {}: a fraction in (0, 1] of each run's algo.total_steps", *b));
  }
  if (const auto n = count_flag(parsed, "seeds")) {
    if (*n < 1) throw UsageError("--seeds must be at least 1");
    if (*n > 1000) throw UsageError(fmt::format("--seeds {}: at most 1000 seeds per cell", *n));
    job.spec.seeds.clear();
    for (int s = 0; s < *n; ++s) job.spec.seeds.push_back(s);
  }
  auto runs = sweep::expand(job.spec);
  if (const auto cells = parsed.get("cells")) {
    // Comma-separated parts of config labels: "repeat_previous_easy" keeps that task for every model.
    std::vector<std::string> parts;
    for (size_t start = 0; start <= cells->size();) {
      const size_t comma = std::min(cells->find(',', start), cells->size());
      if (comma > start) parts.push_back(cells->substr(start, comma - start));
      start = comma + 1;
    }
    std::erase_if(runs, [&](const sweep::SweepRun& r) {
      return std::none_of(parts.begin(), parts.end(),
                          [&](const std::string& p) { return r.config_label.find(p) != std::string::npos; });
    });
    if (runs.empty()) throw UsageError(fmt::format("--cells {}: no cell of {} matches", *cells, table.id));
    for (size_t i = 0; i < runs.size(); ++i) runs[i].index = static_cast<int>(i);
  }
  if (budget < 1.0) {
    // PPO trains whole iterations of num_envs × steps_per_env steps, so a budget below one trains one iteration
    // anyway (and 30 epochs of updates on it): refuse, naming the smallest budget every cell can honour.
    double smallest = 0;
    std::string smallest_cell;
    std::vector<int64_t> totals;  // each run's algo.total_steps, read once
    for (const auto& run : runs) {
      const Config config = load_config(run.config, run.overrides);
      totals.push_back(config.algo.total_steps);
      if (config.algo.type != "ppo") continue;
      const double iteration = static_cast<double>(config.env.num_envs) * config.algo.ppo.steps_per_env;
      if (const double need = iteration / static_cast<double>(config.algo.total_steps); need > smallest) {
        smallest = need;
        smallest_cell =
            fmt::format("{}: one iteration is env.num_envs × algo.ppo.steps_per_env = {} × {} steps of {}",
                        run.config_label, config.env.num_envs, config.algo.ppo.steps_per_env, config.algo.total_steps);
      }
    }
    if (budget < smallest)
      throw UsageError(
          fmt::format("--budget {:g} is below one PPO iteration ({}); the smallest budget of {} is "
                      "{:.3g} (or run fewer --cells)",
                      budget, smallest_cell, table.id, std::ceil(smallest * 1000) / 1000));
    for (size_t i = 0; i < runs.size(); ++i) {
      const auto scaled = std::max<int64_t>(1, std::llround(budget * static_cast<double>(totals[i])));
      runs[i].overrides.push_back(fmt::format("algo.total_steps={}", scaled));
    }
  }
  job.runs = std::move(runs);
  const std::string folder = sweep::safe_name(table.id) + (budget < 1.0 ? fmt::format("__budget={:g}", budget) : "");
  job.dir = parsed.get("out") ? fs::path(*parsed.get("out")) : fs::path("runs/reproduce") / folder;
  job.child_command = {"reproduce", table.id, "--out", fs::absolute(job.dir).lexically_normal().string()};
  for (const char* flag : {"budget", "seeds", "cells"})
    if (const auto v = parsed.get(flag))
      job.child_command.insert(job.child_command.end(), {std::string("--") + flag, *v});

  if (parsed.has("collect")) return report(table, job, budget);
  const int status = run_sweep_job(job, parsed, emit_dir);
  const bool ran_everything = !parsed.has("only") && !parsed.has("dry-run") && !emit_dir;
  if (ran_everything && (status == 0 || status == 1)) report(table, job, budget);
  return status;
}

}  // namespace rlm::app
