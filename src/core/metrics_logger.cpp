#include "core/metrics_logger.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <ranges>
#include <stdexcept>
#include <system_error>

#include "core/atomic_file.hpp"

namespace rlm {
namespace {

constexpr const char* kJsonlName = "metrics.jsonl";
constexpr const char* kCsvName = "metrics.csv";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read '{}'", path.string()));
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) {
      lines.push_back(text);  // no newline: a row cut short by a crash
      break;
    }
    lines.push_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  return lines;
}

// A crash can cut the last row short; appending after it would glue two rows into one unreadable line.
void drop_incomplete_last_line(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0) return;
  const std::string text = read_text(path);
  if (text.back() == '\n') return;
  const size_t keep = text.rfind('\n');
  std::filesystem::resize_file(path, keep == std::string::npos ? 0 : keep + 1);
}

// Tags are ours (e.g. "losses/policy_loss"), but quote the rare one with a comma so the CSV stays parseable.
std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

std::vector<std::string> parse_csv_line(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

std::ofstream open_append(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) throw std::runtime_error(fmt::format("cannot open '{}' for appending", path.string()));
  return out;
}

void flush_or_throw(std::ofstream& out, const std::filesystem::path& path) {
  out.flush();
  if (!out) throw std::runtime_error(fmt::format("cannot write '{}'", path.string()));
}

bool parse_step(std::string_view text, int64_t& step) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), step);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

MetricsLogger::MetricsLogger(const std::filesystem::path& run_dir, bool tensorboard)
    : jsonl_path_(run_dir / kJsonlName), csv_path_(run_dir / kCsvName) {
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create '{}': {}", run_dir.string(), ec.message()));

  drop_incomplete_last_line(jsonl_path_);
  drop_incomplete_last_line(csv_path_);
  if (std::filesystem::exists(csv_path_, ec) && std::filesystem::file_size(csv_path_, ec) > 0) {
    const std::string text = read_text(csv_path_);
    std::vector<std::string> header = parse_csv_line(text.substr(0, text.find('\n')));
    if (header.empty() || header.front() != "step")
      throw std::runtime_error(fmt::format("'{}' does not start with a 'step' column", csv_path_.string()));
    csv_columns_.assign(header.begin() + 1, header.end());
  }
  jsonl_ = open_append(jsonl_path_);
  csv_ = open_append(csv_path_);
  if (tensorboard) tensorboard_ = std::make_unique<TensorBoardWriter>(run_dir);
}

void MetricsLogger::log(int64_t step, const std::vector<std::pair<std::string, double>>& scalars) {
  // ordered_json keeps "step" first and tags in the caller's order, so rows read naturally.
  nlohmann::ordered_json row;
  row["step"] = step;
  for (const auto& [tag, value] : scalars) row[tag] = std::isfinite(value) ? nlohmann::ordered_json(value) : nullptr;
  jsonl_ << row.dump() << '\n';
  flush_or_throw(jsonl_, jsonl_path_);

  if (csv_columns_.empty() && !scalars.empty()) {
    std::string header = "step";
    for (const auto& [tag, value] : scalars) {
      if (std::find(csv_columns_.begin(), csv_columns_.end(), tag) != csv_columns_.end()) continue;
      csv_columns_.push_back(tag);
      header += ',' + csv_cell(tag);
    }
    csv_ << header << '\n';
  }
  if (!csv_columns_.empty()) {
    std::string line = std::to_string(step);
    for (const std::string& column : csv_columns_) {
      line += ',';
      // Linear search: a row has a few dozen tags at most, and the last value for a repeated tag wins as in JSONL.
      for (const auto& [tag, value] : scalars | std::views::reverse) {
        if (tag == column) {
          line += fmt::format("{}", value);  // shortest text that reads back to the same double
          break;
        }
      }
    }
    csv_ << line << '\n';
    flush_or_throw(csv_, csv_path_);
  }

  if (tensorboard_) {
    const double wall_time = TensorBoardWriter::now();
    // A value a row does not have (an evaluation that did not run, a loss before the first update) is NaN: a gap in
    // TensorBoard's curve rather than a point.
    for (const auto& [tag, value] : scalars) {
      if (std::isfinite(value)) tensorboard_->add_scalar(tag, value, step, wall_time);
    }
  }
}

void MetricsLogger::truncate_after(const std::filesystem::path& run_dir, int64_t step) {
  std::error_code ec;
  const std::filesystem::path jsonl_path = run_dir / kJsonlName;
  if (std::filesystem::exists(jsonl_path, ec)) {
    const std::string text = read_text(jsonl_path);
    std::string kept;
    for (std::string_view line : split_lines(text)) {
      // Unparseable lines can only be a row cut short by a crash: drop them along with the later rows.
      const auto row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (row.is_object() && row.contains("step") && row["step"].is_number_integer() &&
          row["step"].get<int64_t>() <= step) {
        kept.append(line);
        kept += '\n';
      }
    }
    write_file_atomic(jsonl_path, kept);
  }

  const std::filesystem::path csv_path = run_dir / kCsvName;
  if (std::filesystem::exists(csv_path, ec)) {
    const std::string text = read_text(csv_path);
    const std::vector<std::string_view> lines = split_lines(text);
    std::string kept;
    for (size_t i = 0; i < lines.size(); ++i) {
      int64_t row_step = 0;
      const std::string_view first_cell = lines[i].substr(0, lines[i].find(','));
      const bool complete = i + 1 < lines.size() || text.back() == '\n';
      if (i == 0 || (complete && parse_step(first_cell, row_step) && row_step <= step)) {
        kept.append(lines[i]);
        kept += '\n';
      }
    }
    write_file_atomic(csv_path, kept);
  }
  TensorBoardWriter::truncate_after(run_dir, step);
}

}  // namespace rlm
