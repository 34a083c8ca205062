// Sampling tests: what the C++ envs draw by themselves (deck shuffles, ship and mine placement, mazes, initial
// states, bandit payouts, observation noise) against statistics recorded from popgym 1.0.7 by
// scripts/record_popgym_sampling.py (tests/data/popgym/sampling_stats.json). The golden replays restore popgym's
// reset state and inject its per-step draws, so a biased shuffle or a skewed maze generator would pass them.
//
// Every env is reset with as many seeds as popgym was (seed_base() + i); each family computes every statistic of its
// JSON entries under the same name, and compare_with_popgym() tests them by kind (two-sample tests, since popgym's
// figures carry sampling noise too):
//   categorical, table  chi-square homogeneity (a table's rows summed), failing above the 1e-6 quantile
//   cell_freq           two-proportion z-test per cell, |z| < 5
//   real                mean and variance z-tests, |z| < 5, and the histogram as a categorical
// A correct env therefore fails with probability around 1e-3 over the whole file for a random seed base; the seeds
// are fixed, so the test is deterministic (RLM_SAMPLING_SEED=<n> picks another base, to check that claim).
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "envs/popgym/autoencode.hpp"
#include "envs/popgym/battleship.hpp"
#include "envs/popgym/concentration.hpp"
#include "envs/popgym/count_recall.hpp"
#include "envs/popgym/higher_lower.hpp"
#include "envs/popgym/labyrinth_escape.hpp"
#include "envs/popgym/labyrinth_explore.hpp"
#include "envs/popgym/mine_sweeper.hpp"
#include "envs/popgym/multiarmed_bandit.hpp"
#include "envs/popgym/noisy_position_only_cartpole.hpp"
#include "envs/popgym/noisy_position_only_pendulum.hpp"
#include "envs/popgym/position_only_cartpole.hpp"
#include "envs/popgym/position_only_pendulum.hpp"
#include "envs/popgym/repeat_first.hpp"
#include "envs/popgym/repeat_previous.hpp"
#include "envs/popgym/velocity_only_cartpole.hpp"
#include "envs/registry.hpp"
#include "golden.hpp"

using namespace rlm::envs;
using namespace rlm::envs::popgym;

namespace {

// ---- statistics: what one env's episodes produced, named as in its JSON entry ----

/// How often each value 0, 1, 2, ... occurred.
struct Categorical {
  std::vector<int64_t> counts;
  void add(int64_t value) {
    if (value >= static_cast<int64_t>(counts.size())) counts.resize(static_cast<size_t>(value) + 1, 0);
    ++counts[static_cast<size_t>(value)];
  }
};

/// Per cell, in how many of n episodes an event (a ship, a mine, a wall) happened there.
struct CellFreq {
  int64_t n = 0;
  std::vector<int64_t> counts;
};

struct Sampled {
  std::map<std::string, Categorical> categorical;
  std::map<std::string, std::vector<std::vector<int64_t>>> tables;
  std::map<std::string, CellFreq> cell_freq;
  std::map<std::string, std::vector<double>> reals;  // raw values: moments and histograms come from them
  size_t size() const { return categorical.size() + tables.size() + cell_freq.size() + reals.size(); }
};

/// Position x card counts of a deck right after reset (positions index Deck::order(), as popgym's deck.idx).
void count_positions(std::span<const int> order, std::vector<std::vector<int64_t>>& table) {
  table.resize(order.size(), std::vector<int64_t>(order.size(), 0));
  for (size_t p = 0; p < order.size(); ++p) ++table[p][static_cast<size_t>(order[p])];
}

// ---- two-sample tests ----

constexpr double kMaxZ = 5;           // normal tests: two-sided p = 6e-7 per test
constexpr double kChiSquareZ = 4.75;  // chi-square tests fail above their 1 - 1e-6 quantile

struct ChiSquare {
  double statistic = 0;
  int df = 0;
};

/// Two-sample chi-square homogeneity statistic of two histograms over the same categories, for unequal totals
/// (Numerical Recipes' chstwo). Categories seen fewer than 10 times in both together are pooled into one, so that
/// the chi-square approximation holds.
ChiSquare chi_square(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::max(a.size(), b.size());
  auto at = [](const std::vector<int64_t>& v, size_t i) { return i < v.size() ? static_cast<double>(v[i]) : 0.0; };
  double total_a = 0, total_b = 0;
  for (size_t i = 0; i < n; ++i) {
    total_a += at(a, i);
    total_b += at(b, i);
  }
  ChiSquare out;
  if (total_a == 0 && total_b == 0) return out;  // nothing on either side (df 0: not tested)
  if (total_a == 0 || total_b == 0) return {std::numeric_limits<double>::infinity(), 1};  // one side never sampled
  const double ka = std::sqrt(total_b / total_a), kb = std::sqrt(total_a / total_b);
  auto term = [&](double x, double y) { return (ka * x - kb * y) * (ka * x - kb * y) / (x + y); };
  double rest_a = 0, rest_b = 0;
  int categories = 0;
  for (size_t i = 0; i < n; ++i) {
    const double x = at(a, i), y = at(b, i);
    if (x + y >= 10) {
      out.statistic += term(x, y);
      ++categories;
    } else {
      rest_a += x;
      rest_b += y;
    }
  }
  if (rest_a + rest_b > 0) {
    out.statistic += term(rest_a, rest_b);
    ++categories;
  }
  out.df = std::max(categories - 1, 0);
  return out;
}

/// The chi-square quantile of the kChiSquareZ normal quantile (Wilson and Hilferty's cube-root approximation).
double chi_square_critical(int df) {
  const double h = 2.0 / (9.0 * df);
  return df * std::pow(1 - h + kChiSquareZ * std::sqrt(h), 3);
}

void check_chi_square(const ChiSquare& c, const std::string& what) {
  if (c.df == 0) return;  // one category on both sides: nothing to compare
  INFO(what << ": chi-square " << c.statistic << " with " << c.df << " df, critical value "
            << chi_square_critical(c.df));
  CHECK(c.statistic < chi_square_critical(c.df));
}

void check_categorical(const std::vector<int64_t>& cpp, const nlohmann::json& popgym, const std::string& what) {
  check_chi_square(chi_square(cpp, popgym.at("counts").get<std::vector<int64_t>>()), what);
}

/// Rows are tested separately and their statistics summed. For a deck (every sample a permutation, so row and
/// column sums are fixed) the sum is (n/(n-1)) chi-square((n-1)^2), whose mean equals the nominal n(n-1) df and
/// whose spread is within 2% of it.
void check_table(const std::vector<std::vector<int64_t>>& cpp, const nlohmann::json& popgym, const std::string& what) {
  const auto rows = popgym.at("rows").get<std::vector<std::vector<int64_t>>>();
  REQUIRE(cpp.size() == rows.size());
  ChiSquare sum;
  size_t worst_row = 0;
  double worst = -1;
  for (size_t r = 0; r < rows.size(); ++r) {
    const ChiSquare c = chi_square(cpp[r], rows[r]);
    sum.statistic += c.statistic;
    sum.df += c.df;
    if (c.df > 0 && c.statistic / c.df > worst) {
      worst = c.statistic / c.df;
      worst_row = r;
    }
  }
  INFO("row " << worst_row << " deviates most (chi-square / df " << worst << ")");
  check_chi_square(sum, what);
}

void check_cell_freq(const CellFreq& cpp, const nlohmann::json& popgym, const std::string& what) {
  const auto n2 = popgym.at("n").get<double>();
  const auto counts = popgym.at("counts").get<std::vector<int64_t>>();
  REQUIRE(cpp.counts.size() == counts.size());
  const auto n1 = static_cast<double>(cpp.n);
  double worst_z = 0;
  size_t worst = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double p1 = cpp.counts[i] / n1, p2 = counts[i] / n2;
    const double pooled = (cpp.counts[i] + counts[i]) / (n1 + n2);
    const double se = std::sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
    if (se == 0) continue;  // never or always on both sides
    const double z = (p1 - p2) / se;
    if (std::abs(z) > std::abs(worst_z)) {
      worst_z = z;
      worst = i;
    }
  }
  INFO(what << ": cell " << worst << " differs most, C++ " << cpp.counts[worst] / n1 << " vs popgym "
            << counts[worst] / n2 << " (z = " << worst_z << ")");
  CHECK(std::abs(worst_z) < kMaxZ);
}

void check_real(const std::vector<double>& x, const nlohmann::json& popgym, const std::string& what) {
  REQUIRE(!x.empty());
  const auto n1 = static_cast<double>(x.size());
  double mean = 0;
  for (double v : x) mean += v;
  mean /= n1;
  double var = 0, m4 = 0;
  for (double v : x) {
    const double d2 = (v - mean) * (v - mean);
    var += d2;
    m4 += d2 * d2;
  }
  var /= n1;
  m4 /= n1;
  const auto n2 = popgym.at("n").get<double>();
  const auto mean2 = popgym.at("mean").get<double>(), var2 = popgym.at("var").get<double>();
  const auto m4_2 = popgym.at("m4").get<double>();
  // The variance of a sample variance is (m4 - var^2) / n.
  const double se_mean = std::sqrt(var / n1 + var2 / n2);
  const double se_var = std::sqrt((m4 - var * var) / n1 + (m4_2 - var2 * var2) / n2);
  {
    INFO(what << ": mean C++ " << mean << " vs popgym " << mean2 << " (standard error " << se_mean << ")");
    CHECK(std::abs(mean - mean2) <= kMaxZ * se_mean);
  }
  {
    INFO(what << ": variance C++ " << var << " vs popgym " << var2 << " (standard error " << se_var << ")");
    CHECK(std::abs(var - var2) <= kMaxZ * se_var);
  }
  const auto edges = popgym.at("edges").get<std::vector<double>>();
  std::vector<int64_t> bins(edges.size() + 1, 0);
  for (double v : x) ++bins[static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), v) - edges.begin())];
  check_categorical(bins, popgym, what + " histogram");
}

/// popgym's entry for env `name` (e.g. "BattleshipEasy"), parsed once.
const nlohmann::json& popgym_entry(const std::string& name) {
  static const nlohmann::json stats = rlm::envs::test::load_golden("sampling_stats");
  return stats.at("envs").at(name);
}

/// Tests every statistic of popgym's entry `name` against the one C++ computed under the same name, and that C++
/// computed nothing popgym did not record.
void compare_with_popgym(const std::string& name, const Sampled& cpp) {
  const auto& entry = popgym_entry(name);
  size_t compared = 0;
  for (const auto& [key, stat] : entry.items()) {
    if (!stat.is_object()) continue;  // "id", "episodes"
    const std::string kind = stat.at("kind");
    const std::string what = name + " " + key;
    INFO(what);
    ++compared;
    if (kind == "categorical") {
      REQUIRE(cpp.categorical.count(key) == 1);
      check_categorical(cpp.categorical.at(key).counts, stat, what);
    } else if (kind == "table") {
      REQUIRE(cpp.tables.count(key) == 1);
      check_table(cpp.tables.at(key), stat, what);
    } else if (kind == "cell_freq") {
      REQUIRE(cpp.cell_freq.count(key) == 1);
      check_cell_freq(cpp.cell_freq.at(key), stat, what);
    } else {
      REQUIRE(kind == "real");
      REQUIRE(cpp.reals.count(key) == 1);
      check_real(cpp.reals.at(key), stat, what);
    }
  }
  CHECK(compared == cpp.size());
}

// ---- driving the envs ----

const WrapperOptions kRaw{.previous_action = false, .antialias = false, .flatten = false};

uint64_t seed_base() {
  const char* s = std::getenv("RLM_SAMPLING_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 1'000'003;
}

/// Resets popgym/<name> as often as popgym's entry says it was, calling visit(env, reset obs) after each reset.
template <class E, class Visit>
void for_each_reset(const std::string& name, Visit visit) {
  const auto episodes = popgym_entry(name).at("episodes").get<int64_t>();
  auto env = make_env("popgym/" + name, kRaw);
  auto& e = dynamic_cast<E&>(*env);
  std::vector<float> obs(static_cast<size_t>(e.observation_space().raw_size()));
  for (int64_t i = 0; i < episodes; ++i) {
    e.reset(seed_base() + static_cast<uint64_t>(i), obs);
    visit(e, obs);
  }
}

template <class E>
void check_deck_positions(const std::string& name) {
  Sampled s;
  for_each_reset<E>(name,
                    [&](E& e, std::span<float>) { count_positions(e.deck().order(), s.tables["deck_position_card"]); });
  compare_with_popgym(name, s);
}

/// [x, x_dot, theta, theta_dot] drawn at reset, and the products of neighbouring components.
void add_cartpole_state(const std::array<double, 4>& state, Sampled& s) {
  static const char* kNames[4] = {"x", "x_dot", "theta", "theta_dot"};
  for (size_t i = 0; i < 4; ++i) s.reals[std::string("initial_") + kNames[i]].push_back(state[i]);
  for (size_t i = 0; i + 1 < 4; ++i)
    s.reals[std::string("initial_") + kNames[i] + "_times_" + kNames[i + 1]].push_back(state[i] * state[i + 1]);
}

template <class E>
void check_cartpole_initial_state(const std::string& name) {
  Sampled s;
  for_each_reset<E>(name, [&](E& e, std::span<float>) { add_cartpole_state(e.state(), s); });
  compare_with_popgym(name, s);
}

void add_pendulum_state(double theta, double theta_dot, Sampled& s) {
  s.reals["initial_theta"].push_back(theta);
  s.reals["initial_theta_dot"].push_back(theta_dot);
  s.reals["initial_theta_times_theta_dot"].push_back(theta * theta_dot);
}

/// obs - the float32 noise-free obs: write_state()'s [cos theta, sin theta] for the pendulum, [x, theta] of its
/// [x, x_dot, theta, theta_dot] for CartPole.
template <class E>
void add_noise(const E& e, std::span<const float> obs, bool at_reset, Sampled& s) {
  std::vector<float> state(static_cast<size_t>(e.state_space()->raw_size()));
  e.write_state(state);
  const size_t second = state.size() == 4 ? 2 : 1;
  const double noise[2] = {static_cast<double>(obs[0]) - state[0], static_cast<double>(obs[1]) - state[second]};
  const std::string prefix = at_reset ? "reset_noise_" : "step_noise_";
  for (int i = 0; i < 2; ++i) s.reals[prefix + std::to_string(i)].push_back(noise[i]);
  if (at_reset) s.reals["reset_noise_product"].push_back(noise[0] * noise[1]);
}

/// The noise at reset and after one step taking `action`; later steps are left out, as by the script: their
/// clipping depends on a state that the steps of an episode share, so they would not be independent samples.
template <class E>
void add_noise_samples(E& e, std::span<float> obs, const std::vector<float>& action, Sampled& s) {
  add_noise(e, obs, true, s);
  e.step(action, obs);
  add_noise(e, obs, false, s);
}

/// Per maze (as maze_summary in the script): walls per cell, start and exit cells, rooms (odd, odd cells) with 1,
/// >= 3 and 2 opposite open sides, horizontal passages, FREE cells, and the shortest path from the start to the exit
/// (the exit counted as open, though LabyrinthExplore keeps it a wall).
void add_maze(const MazeEnv& m, Sampled& s) {
  const int rows = m.rows(), cols = m.cols();
  auto open = [&](int y, int x) { return m.cell(y, x) != MazeCell::kObstacle; };
  CellFreq& walls = s.cell_freq["wall_cells"];
  walls.counts.resize(static_cast<size_t>(rows * cols), 0);
  ++walls.n;
  int free = 0;
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      walls.counts[static_cast<size_t>(y * cols + x)] += !open(y, x);
      free += m.cell(y, x) == MazeCell::kFree;
    }
  int dead_ends = 0, junctions = 0, straights = 0, horizontal = 0;
  for (int y = 1; y < rows; y += 2)
    for (int x = 1; x < cols; x += 2) {
      const bool up = open(y - 1, x), down = open(y + 1, x), left = open(y, x - 1), right = open(y, x + 1);
      const int degree = up + down + left + right;
      dead_ends += degree == 1;
      junctions += degree >= 3;
      straights += degree == 2 && ((up && down) || (left && right));
      if (x + 1 < cols - 1) horizontal += right;
    }
  const auto [sy, sx] = m.start();
  const auto [ey, ex] = m.end();
  std::vector<int> dist(static_cast<size_t>(rows * cols), -1);
  std::deque<int> queue = {sy * cols + sx};
  dist[static_cast<size_t>(queue.front())] = 0;
  while (!queue.empty()) {
    const int c = queue.front();
    queue.pop_front();
    const int y = c / cols, x = c % cols;
    const int moves[4][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    for (const auto& d : moves) {
      const int ny = y + d[0], nx = x + d[1];
      if (ny < 0 || ny >= rows || nx < 0 || nx >= cols) continue;
      const auto next = static_cast<size_t>(ny * cols + nx);
      if (dist[next] >= 0 || !(open(ny, nx) || (ny == ey && nx == ex))) continue;
      dist[next] = dist[static_cast<size_t>(c)] + 1;
      queue.push_back(ny * cols + nx);
    }
  }
  const int path = dist[static_cast<size_t>(ey * cols + ex)];
  s.categorical["start_cell"].add(sy * cols + sx);
  s.categorical["exit_cell"].add(ey * cols + ex);
  s.categorical["dead_ends"].add(dead_ends);
  s.categorical["junctions"].add(junctions);
  s.categorical["straight_rooms"].add(straights);
  s.categorical["horizontal_passages"].add(horizontal);
  s.categorical["free_cells"].add(free);
  // Like mazelib, the generator leaves a room that no walk reached a wall in 1 maze in 20,000 to 50,000 (more in
  // larger mazes; free_cells counts them, too rarely to compare here), which can cut the exit off. The path length
  // is taken over the other mazes, as by the script.
  if (path > 0) s.reals["path_length"].push_back(path);
}

template <class E>
void check_labyrinth(const std::string& name) {
  Sampled s;
  for_each_reset<E>(name, [&](E& e, std::span<float>) { add_maze(e, s); });
  compare_with_popgym(name, s);
}

}  // namespace

// ---- one test case per family ----

TEST_CASE("sampling: Autoencode deals a uniformly shuffled deck, as popgym", "[envs][sampling]") {
  check_deck_positions<Autoencode>("AutoencodeEasy");
}

TEST_CASE("sampling: HigherLower deals a uniformly shuffled deck, as popgym", "[envs][sampling]") {
  check_deck_positions<HigherLower>("HigherLowerEasy");
}

TEST_CASE("sampling: RepeatFirst deals a uniformly shuffled deck, as popgym", "[envs][sampling]") {
  check_deck_positions<RepeatFirst>("RepeatFirstEasy");
}

TEST_CASE("sampling: RepeatPrevious deals a uniformly shuffled deck, as popgym", "[envs][sampling]") {
  check_deck_positions<RepeatPrevious>("RepeatPreviousEasy");
}

TEST_CASE("sampling: CountRecall shuffles two independent decks, as popgym", "[envs][sampling]") {
  Sampled s;
  for_each_reset<CountRecall>("CountRecallEasy", [&](CountRecall& e, std::span<float>) {
    count_positions(e.value_deck().order(), s.tables["value_position_card"]);
    count_positions(e.query_deck().order(), s.tables["query_position_card"]);
    const int first_value = e.value_deck().order().back(), first_query = e.query_deck().order().back();
    s.categorical["first_ranks_value_query"].add(13 * Deck::rank(first_value) + Deck::rank(first_query));
  });
  compare_with_popgym("CountRecallEasy", s);
}

TEST_CASE("sampling: Concentration lays out a uniformly shuffled deck, as popgym", "[envs][sampling]") {
  // Easy matches colours; Hard matches ranks, where a biased shuffle shows (it barely shows in colours).
  for (const char* name : {"ConcentrationEasy", "ConcentrationHard"}) {
    Sampled s;
    for_each_reset<Concentration>(name, [&](Concentration& e, std::span<float>) {
      auto& table = s.tables["position_category"];
      table.resize(static_cast<size_t>(e.num_positions()), std::vector<int64_t>(e.facedown_code(), 0));
      int same = 0;
      for (int p = 0; p < e.num_positions(); ++p) {
        ++table[static_cast<size_t>(p)][static_cast<size_t>(e.category_at(p))];
        same += p > 0 && e.category_at(p) == e.category_at(p - 1);
      }
      s.categorical["same_category_neighbours"].add(same);
    });
    compare_with_popgym(name, s);
  }
}

TEST_CASE("sampling: Battleship places ships as popgym", "[envs][sampling]") {
  for (const char* name : {"BattleshipEasy", "BattleshipHard"}) {
    Sampled s;
    for_each_reset<Battleship>(name, [&](Battleship& e, std::span<float>) {
      const int b = e.board_size();
      CellFreq& ships = s.cell_freq["ship_cells"];
      ships.counts.resize(static_cast<size_t>(b * b), 0);
      ++ships.n;
      int horizontal = 0, vertical = 0;
      for (int r = 0; r < b; ++r)
        for (int c = 0; c < b; ++c) {
          ships.counts[static_cast<size_t>(r * b + c)] += e.is_ship(r, c);
          horizontal += c + 1 < b && e.is_ship(r, c) && e.is_ship(r, c + 1);
          vertical += r + 1 < b && e.is_ship(r, c) && e.is_ship(r + 1, c);
        }
      s.categorical["horizontal_ship_pairs"].add(horizontal);
      s.categorical["vertical_ship_pairs"].add(vertical);
    });
    compare_with_popgym(name, s);
  }
}

TEST_CASE("sampling: MineSweeper places mines as popgym", "[envs][sampling]") {
  for (const char* name : {"MineSweeperEasy", "MineSweeperHard"}) {
    Sampled s;
    for_each_reset<MineSweeper>(name, [&](MineSweeper& e, std::span<float>) {
      const int rows = e.rows(), cols = e.cols();
      CellFreq& mines = s.cell_freq["mine_cells"];
      mines.counts.resize(static_cast<size_t>(rows * cols), 0);
      ++mines.n;
      std::vector<int> at;  // mine cells, ascending
      int zero_counts = 0;
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          if (e.hidden(r, c) == MineSweeper::kMine) at.push_back(r * cols + c);
          zero_counts += e.neighbor_count(r, c) == 0;
        }
      for (int m : at) ++mines.counts[static_cast<size_t>(m)];
      int touching = 0;
      for (size_t i = 0; i < at.size(); ++i)
        for (size_t j = i + 1; j < at.size(); ++j)
          touching += std::abs(at[i] / cols - at[j] / cols) <= 1 && std::abs(at[i] % cols - at[j] % cols) <= 1;
      s.categorical["touching_mine_pairs"].add(touching);
      s.categorical["cells_with_count_zero"].add(zero_counts);
      if (at.size() == 2) s.categorical["mine_pair"].add(at[0] * rows * cols + at[1]);
    });
    compare_with_popgym(name, s);
  }
}

TEST_CASE("sampling: MultiarmedBandit draws payout probabilities and payouts as popgym", "[envs][sampling]") {
  for (const char* name : {"MultiarmedBanditEasy", "MultiarmedBanditHard"}) {
    Sampled s;
    Rng pulls(12345);  // uniformly random arms; which arm is pulled does not matter, only its probability
    for_each_reset<MultiarmedBandit>(name, [&](MultiarmedBandit& e, std::span<float> obs) {
      const std::vector<float> p = e.bandits();
      for (float v : p) s.reals["payout_probability"].push_back(v);
      const auto best = std::max_element(p.begin(), p.end());  // the first maximum, as np.argmax
      s.reals["max_payout_probability"].push_back(*best);
      s.categorical["best_arm"].add(best - p.begin());
      // The episode's payouts as one figure, about N(0, 1) when a pull pays with probability p (per episode, since
      // the pulls of an episode share their arms' probabilities).
      double surprise = 0, variance = 0;
      for (int64_t t = 0; t < e.max_episode_steps(); ++t) {
        const auto arm = static_cast<size_t>(pulls.uniform_int(p.size()));
        e.step(std::vector<float>{static_cast<float>(arm)}, obs);
        const double pa = p[arm];
        surprise += obs[0] - pa;
        variance += pa * (1 - pa);
      }
      s.reals["payout_z"].push_back(surprise / std::sqrt(variance));
    });
    compare_with_popgym(name, s);
  }
}

TEST_CASE("sampling: PositionOnlyCartPole draws its initial state as popgym", "[envs][sampling]") {
  check_cartpole_initial_state<PositionOnlyCartPole>("PositionOnlyCartPoleEasy");
}

TEST_CASE("sampling: VelocityOnlyCartPole draws its initial state as popgym", "[envs][sampling]") {
  check_cartpole_initial_state<VelocityOnlyCartPole>("VelocityOnlyCartpoleEasy");
}

TEST_CASE("sampling: NoisyPositionOnlyCartPole draws its initial state and obs noise as popgym", "[envs][sampling]") {
  Sampled s;
  const std::vector<float> push_right = {1.0f};
  for_each_reset<NoisyPositionOnlyCartPole>("NoisyPositionOnlyCartPoleEasy",
                                            [&](NoisyPositionOnlyCartPole& e, std::span<float> obs) {
                                              add_cartpole_state(e.state(), s);
                                              add_noise_samples(e, obs, push_right, s);
                                            });
  compare_with_popgym("NoisyPositionOnlyCartPoleEasy", s);
}

TEST_CASE("sampling: PositionOnlyPendulum draws its initial state as popgym", "[envs][sampling]") {
  Sampled s;
  for_each_reset<PositionOnlyPendulum>("PositionOnlyPendulumEasy", [&](PositionOnlyPendulum& e, std::span<float>) {
    add_pendulum_state(e.theta(), e.theta_dot(), s);
  });
  compare_with_popgym("PositionOnlyPendulumEasy", s);
}

TEST_CASE("sampling: NoisyPositionOnlyPendulum draws its initial state and obs noise as popgym", "[envs][sampling]") {
  Sampled s;
  const std::vector<float> no_torque = {0.0f};
  for_each_reset<NoisyPositionOnlyPendulum>("NoisyPositionOnlyPendulumEasy",
                                            [&](NoisyPositionOnlyPendulum& e, std::span<float> obs) {
                                              add_pendulum_state(e.theta(), e.theta_dot(), s);
                                              add_noise_samples(e, obs, no_torque, s);
                                            });
  compare_with_popgym("NoisyPositionOnlyPendulumEasy", s);
}

TEST_CASE("sampling: LabyrinthEscape generates mazes as popgym and mazelib", "[envs][sampling]") {
  check_labyrinth<LabyrinthEscape>("LabyrinthEscapeEasy");
  check_labyrinth<LabyrinthEscape>("LabyrinthEscapeHard");
}

TEST_CASE("sampling: LabyrinthExplore generates mazes as popgym and mazelib", "[envs][sampling]") {
  check_labyrinth<LabyrinthExplore>("LabyrinthExploreEasy");
  check_labyrinth<LabyrinthExplore>("LabyrinthExploreHard");
}
