#include "core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace rlm {
namespace {

std::string format_rate(double per_second) {
  if (!std::isfinite(per_second) || per_second < 0) return "-";
  if (per_second < 1e3) return fmt::format("{:.0f}", per_second);
  if (per_second < 1e6) return fmt::format("{:.1f}k", per_second / 1e3);
  return fmt::format("{:.2f}M", per_second / 1e6);
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-";
  constexpr double kCap = 99999.0 * 3600.0;  // beyond this an ETA means nothing, and llround would overflow
  if (seconds > kCap) return ">99999h";
  const long long total = std::llround(seconds);
  const long long hours = total / 3600, minutes = total % 3600 / 60, secs = total % 60;
  if (hours > 0) return fmt::format("{}h{:02}m", hours, minutes);
  if (minutes > 0) return fmt::format("{}m{:02}s", minutes, secs);
  return fmt::format("{}s", secs);
}

std::string format_count(int64_t value) {
  const std::string digits = std::to_string(value < 0 ? -static_cast<uint64_t>(value) : static_cast<uint64_t>(value));
  std::string out = value < 0 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_progress(int64_t steps, int64_t total_steps, double steps_per_second, double mean_return,
                            int64_t episodes) {
  std::string line = "[train] " + format_count(steps);
  if (total_steps > 0) {
    line += fmt::format("/{} steps ({:.1f}%)", format_count(total_steps),
                        100.0 * static_cast<double>(steps) / static_cast<double>(total_steps));
  } else {
    line += " steps";
  }
  line += fmt::format(" | {} steps/s", format_rate(steps_per_second));
  const std::string ret = std::isnan(mean_return) ? std::string("-") : fmt::format("{:.3f}", mean_return);
  line += fmt::format(" | return {} ({} eps)", ret, episodes);
  if (total_steps > 0) {
    const double remaining = static_cast<double>(std::max<int64_t>(total_steps - steps, 0));
    const double eta = remaining == 0 ? 0.0 : steps_per_second > 0 ? remaining / steps_per_second : -1.0;
    line += " | ETA " + format_duration(eta);
  }
  return line;
}

ProgressLine::ProgressLine(int64_t total_steps, bool enabled, std::FILE* out, double file_phase_seconds)
    : total_steps_(total_steps),
      enabled_(enabled),
      out_(out),
      live_(::isatty(::fileno(out)) == 1),
      status_(format_progress(0, total_steps, 0.0, std::nan(""), 0)),
      last_shown_(std::chrono::steady_clock::now()),
      phase_interval_(live_ ? 0.2 : file_phase_seconds) {}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::update(int64_t steps, double steps_per_second, double mean_return, int64_t episodes) {
  if (!enabled_) return;
  status_ = format_progress(steps, total_steps_, steps_per_second, mean_return, episodes);
  show(status_);
}

void ProgressLine::show_phase(const std::string& text) { show(status_ + " | " + text); }

void ProgressLine::show(const std::string& line) {
  last_shown_ = std::chrono::steady_clock::now();
  if (live_) {
    // Pad with spaces rather than an ANSI clear-line code: works on every terminal, including dumb ones.
    const size_t pad = last_width_ > line.size() ? last_width_ - line.size() : 0;
    std::fprintf(out_, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
    last_width_ = line.size();
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

void ProgressLine::finish() {
  if (live_ && last_width_ > 0) {
    std::fputc('\n', out_);
    std::fflush(out_);
  }
  last_width_ = 0;
}

}  // namespace rlm
