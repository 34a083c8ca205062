// Shared by the Visual Match and Key-to-Door tests: the data recorded from Memory-RL's pycolab tasks
// (scripts/record_memory_rl_pycolab.py -> tests/data/memory_rl/), golden replays through an env's restore_golden hook,
// two-sample chi-square tests of our draws against the reference's, and scripted walking.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/env_config.hpp"
#include "envs/memory_rl/pycolab_board.hpp"
#include "envs/registry.hpp"
#include "test_data.hpp"

namespace rlm::envs::test {

inline nlohmann::json load_memory_rl(const std::string& name) { return load_test_data("memory_rl/" + name + ".json"); }

/// A recorded obs: the base64 of the wrapper's 75 uint8 values, as floats.
inline std::vector<float> decode_obs(const std::string& b64) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::vector<float> out;
  int bits = 0, acc = 0;
  for (char c : b64) {
    const int v = value(c);
    if (v < 0) break;  // '=' padding
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<float>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

/// What the golden replays of one file covered.
struct GoldenCoverage {
  int episodes = 0, successes = 0, failures = 0;
  double apple_reward = 0;  // summed over the distractor phases
};

/// Replays every episode of tests/data/memory_rl/<name>.json through a fresh unwrapped env of type E from its recorded
/// draws (E::restore_golden): obs, reward, terminated (= the reference's done), truncated (never) and success must
/// match exactly at every step.
template <class E>
GoldenCoverage check_pycolab_golden(const std::string& name) {
  const auto data = load_memory_rl(name);
  EnvOptions options;
  options.variant = data.at("options").at("variant");
  options.distractor_length = data.at("options").at("distractor_length");
  const auto lengths = data.at("phase_frames").get<std::vector<int>>();
  GoldenCoverage cover;
  for (const auto& ep : data.at("episodes")) {
    INFO(name << " seed " << ep.at("seed") << " policy " << ep.at("policy"));
    auto env =
        make_env(data.at("canonical_id"), {.previous_action = false, .antialias = false, .flatten = false}, options);
    auto* e = dynamic_cast<E*>(env.get());
    REQUIRE(e != nullptr);
    REQUIRE(e->max_episode_steps() == lengths[0] + lengths[1] + lengths[2]);
    std::vector<float> obs(75);
    e->restore_golden(ep.at("initial_state"), obs);
    REQUIRE(obs == decode_obs(ep.at("obs")[0]));
    const auto& actions = ep.at("actions");
    REQUIRE(static_cast<int64_t>(actions.size()) == e->max_episode_steps());
    for (size_t t = 0; t < actions.size(); ++t) {
      INFO("step " << t + 1);
      const float a = actions[t].get<float>();
      const auto r = e->step({&a, 1}, obs);
      REQUIRE(r.reward == ep.at("rewards")[t].get<float>());
      REQUIRE(r.terminated == ep.at("done")[t].get<bool>());
      REQUIRE_FALSE(r.truncated);
      REQUIRE(r.success == ep.at("success")[t].get<bool>());
      REQUIRE(obs == decode_obs(ep.at("obs")[t + 1]));
      if (static_cast<int>(t) >= lengths[0] && static_cast<int>(t) < lengths[0] + lengths[1])
        cover.apple_reward += r.reward;
      if (r.terminated) (r.success ? cover.successes : cover.failures) += 1;
    }
    ++cover.episodes;
  }
  return cover;
}

/// Two-sample chi-square homogeneity test of two histograms over the same categories (unequal totals; Numerical
/// Recipes' chstwo), failing above the 1 − 1e-6 quantile (Wilson-Hilferty). Categories seen fewer than 10 times in
/// both together are pooled.
inline void check_same_distribution(const std::vector<int64_t>& ours, const std::vector<int64_t>& reference,
                                    const std::string& what) {
  REQUIRE(ours.size() == reference.size());
  double total_a = 0, total_b = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    total_a += static_cast<double>(ours[i]);
    total_b += static_cast<double>(reference[i]);
  }
  REQUIRE(total_a > 0);
  REQUIRE(total_b > 0);
  const double ka = std::sqrt(total_b / total_a), kb = std::sqrt(total_a / total_b);
  auto term = [&](double x, double y) { return (ka * x - kb * y) * (ka * x - kb * y) / (x + y); };
  double statistic = 0, rest_a = 0, rest_b = 0;
  int categories = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    const auto x = static_cast<double>(ours[i]), y = static_cast<double>(reference[i]);
    if (x + y >= 10) {
      statistic += term(x, y);
      ++categories;
    } else {
      rest_a += x;
      rest_b += y;
    }
  }
  if (rest_a + rest_b > 0) {
    statistic += term(rest_a, rest_b);
    ++categories;
  }
  const int df = categories - 1;
  if (df < 1) return;  // a single category: nothing to compare
  const double h = 2.0 / (9.0 * df), z = 4.75;
  const double critical = df * std::pow(1 - h + z * std::sqrt(h), 3);
  INFO(what << ": chi-square " << statistic << " with " << df << " df, critical value " << critical);
  CHECK(statistic < critical);
}

/// How often each cell of `cells` occurs in `drawn`.
inline std::vector<int64_t> cell_counts(const std::vector<memory_rl::pycolab::Cell>& cells,
                                        const std::vector<memory_rl::pycolab::Cell>& drawn) {
  std::vector<int64_t> out(cells.size(), 0);
  for (const auto& d : drawn)
    for (size_t i = 0; i < cells.size(); ++i)
      if (cells[i] == d) ++out[i];
  return out;
}

/// The reference's list of cells in a statistics entry ([[row, col], ...]).
inline std::vector<memory_rl::pycolab::Cell> cells_in(const nlohmann::json& list) {
  std::vector<memory_rl::pycolab::Cell> out;
  for (const auto& c : list) out.push_back({c.at(0).get<int>(), c.at(1).get<int>()});
  return out;
}

/// The 75 view values' RGB triple at view cell (row, col), 0..4 each.
inline std::array<float, 3> view_rgb(const std::vector<float>& obs, int row, int col) {
  const auto i = static_cast<size_t>(row * 5 + col);
  return {obs[i], obs[i + 25], obs[i + 50]};
}

}  // namespace rlm::envs::test
