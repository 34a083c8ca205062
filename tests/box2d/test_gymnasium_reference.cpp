// Our Box2D 2.4.1 ports against Gymnasium's own envs (pybox2d, Box2D 2.3), statistically (docs/envs/box2d.md).
// tests/data/box2d/gymnasium_reference.json is what scripts/record_gymnasium_box2d.py recorded from gymnasium[box2d]:
// for every cell of the band table (env × policy) the return, length and terminal-cause statistics over n = 1000 env
// seeds, and per env configuration the reset observation's per-element mean, sd, range and 5%/95% quantiles. Each
// cell is played again by our env with the same controller (the heuristics of tests/box2d/*_policies.hpp, written
// from Gymnasium's; the recording checked that its copy acts as Gymnasium's own heuristic functions do)
// over n = 200 seeds of our own Rng, and the two samples are compared.
//
// Tolerances. Two independent samples of the same distribution differ in mean by a normal variable of standard error
// SE = sqrt(sd_ours² / n_ours + sd_ref² / n_ref); each check allows 4 SE (a false alarm about once in 16,000 checks)
// plus an engine allowance where the engines differ. Free flight agrees (to about 1e-4 over 60 lander steps
// with the same injected draws); the engines part at contacts, where 2.4's edge-polygon collision and its revolute
// limits (the lander's spring-loaded legs, the walker's knees) differ from 2.3's. So:
//   - Contact-dominated quantities get an allowance of a quarter of the reference's sd (for a rate, a quarter of
//     sqrt(p(1 − p))). The figure: the walker heuristic's mean moves between engines by +10 (Gymnasium on 2.3 to
//     our pre-port 2.4.1 prototype) and −32 (to envpool's 2.4.2 port), the latter about 0.25 of its sd of 126. That is
//     every walker quantity; for the lander, the episode length of every cell (the time from touchdown to rest) and
//     everything of the random-action cells (hard landings, tipping, crashes).
//     Measured against this recording with our env on seeds 0..999, these lander quantities do move: the
//     continuous heuristic takes 12 steps longer from the first leg contact to rest (length 213 against Gymnasium's
//     202, while the first contact comes at step 146.1 against 146.6, and the returns agree: 282.5 against 282.8),
//     the discrete one 14 (272 against 258), and the random-action returns are lower with a heavier tail (discrete
//     −202 against −178, 0.24 sd; continuous −221 against −210), because a random lander stays on its legs longer
//     after touching down (5.0 against 3.2 steps before the hull hits) and tips further. The independent pre-port
//     2.4.1 prototype measured the same (lengths 216 and 263, random −229.0 and −201.6).
//   - No allowance for the lander's flight and landing: the heuristics' returns and terminal causes (the pre-port
//     2.4.1 prototype lies within one standard error of Gymnasium's heuristic returns) and, in every lander cell,
//     the step of the first leg contact, the end of the free flight.
//   - The allowances still catch the gross errors these tests are for: the referenceAngle bug moves the normal
//     walker's heuristic from about 110 to 280, 1.4 sd; feeding the walker heuristic hip angles off by 0.05
//     fails its return and rates, and gravity −10.5 instead of −10 fails the lander's first-contact step.
//   - Rates (success and every terminal cause) are compared as proportions, with the pooled binomial SE, so that a
//     rate of 0 or 1 on one side does not make the check impossible.
//   - Reset observations, per element, each with an engine allowance of 2e-3 (the reset observation agrees to
//     about 1e-3: one physics step, in which the legs snap onto their joint limits, solved by different
//     revolute-joint solvers): the mean as above; the sd within 4 standard errors of the difference of two sample
//     sds, sd·sqrt((κ − 1)/4 · (1/n + 1/m)) with κ our sample's kurtosis (1.8 for the uniform pushes, 3 for a
//     normal); the range: our min and max lie within the reference's [min, max] widened by 5% of its width on each
//     side (a sample of 200 can pass the extremes of 1000 by a little, never by much for these bounded pushes), and
//     reach past the reference's 5% and 95% quantiles (200 draws all miss the outer 5% on one side with a
//     probability of 0.95^200 = 3.5e-5, whatever the distribution's shape).
//   - The LunarLander heuristics' return distributions are also compared whole with a two-sample Kolmogorov–Smirnov
//     test at α = 0.001 (planned for once Gymnasium returns were at hand): D ≤ 1.95·sqrt((n + m) / (n m)).
//     Where an engine allowance applies (the walker, the random lander) D is printed, not tested: the engine shift
//     moves the distribution, and the mean and rate checks with their allowance are all that can be promised.
// Every figure is printed (ours beside the reference's) whether or not its check passes.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "box2d/bipedal_walker_policies.hpp"
#include "box2d/lunar_lander_policies.hpp"
#include "envs/box2d/bipedal_walker.hpp"
#include "envs/box2d/lunar_lander.hpp"
#include "envs/rng.hpp"
#include "envs/test_data.hpp"

using nlohmann::json;
using rlm::envs::Rng;
using rlm::envs::box2d::BipedalWalker;
using rlm::envs::box2d::BipedalWalkerConfig;
using rlm::envs::box2d::LanderEnd;
using rlm::envs::box2d::LunarLander;
using rlm::envs::box2d::LunarLanderConfig;
using rlm::envs::box2d::WalkerEnd;

namespace {

constexpr int kEpisodes = 200;
constexpr uint64_t kSeedBase = 2000;           // env seeds 2000..2199 (the band tests use others)
constexpr uint64_t kPolicySeedBase = 3000000;  // random policies: Rng(kPolicySeedBase + seed), a stream of their own
constexpr double kZ = 4.0;                     // standard errors allowed in every comparison
constexpr double kEngineSd = 0.25;             // the engine allowance of contact-dominated quantities, in sds
constexpr double kResetEngine = 2e-3;          // reset observation: "about 1e-3", twice
constexpr double kKsCoefficient = 1.95;        // c(α) of the two-sample KS test at α = 0.001

const json& reference() {
  static const json data = rlm::envs::test::load_test_data("box2d/gymnasium_reference.json");
  return data;
}

/// One cell played by our env: every return and length, the count of every terminal cause, and (lander) the step
/// of the first leg contact in the episodes that have one.
struct Sample {
  std::vector<double> returns, lengths, first_contacts;
  std::map<std::string, int> causes;
  int n() const { return static_cast<int>(returns.size()); }
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double sd(const std::vector<double>& v) {  // population sd, as the recording's numpy std()
  const double m = mean(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

/// Two-sample Kolmogorov–Smirnov statistic.
double ks_statistic(std::vector<double> a, std::vector<double> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  size_t i = 0, j = 0;
  double d = 0;
  while (i < a.size() && j < b.size()) {
    const double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / a.size() - static_cast<double>(j) / b.size()));
  }
  return d;
}

/// |ours − ref| ≤ 4 SE of the difference + allowance, printed.
bool close_means(const char* what, double m_ours, double sd_ours, int n_ours, double m_ref, double sd_ref, int n_ref,
                 double allowance) {
  const double se = std::sqrt(sd_ours * sd_ours / n_ours + sd_ref * sd_ref / n_ref);
  const double tol = kZ * se + allowance;
  const bool ok = std::abs(m_ours - m_ref) <= tol;
  std::printf("  %-22s ours %9.3f (sd %7.2f)  gymnasium %9.3f (sd %7.2f)  diff %+8.3f  tol %7.3f%s\n", what, m_ours,
              sd_ours, m_ref, sd_ref, m_ours - m_ref, tol, ok ? "" : "  FAIL");
  return ok;
}

/// Proportions k/n against the reference's rate p_ref over n_ref: pooled binomial SE.
bool close_rates(const std::string& what, int k, int n, double p_ref, int n_ref, double engine_sd_fraction) {
  const double p = static_cast<double>(k) / n;
  const double pooled = (k + p_ref * n_ref) / (n + n_ref);
  const double spread = std::sqrt(pooled * (1 - pooled));
  const double tol = kZ * spread * std::sqrt(1.0 / n + 1.0 / n_ref) + engine_sd_fraction * spread;
  const bool ok = std::abs(p - p_ref) <= tol + 1e-12;
  std::printf("  %-22s ours %9.3f               gymnasium %9.3f               diff %+8.3f  tol %7.3f%s\n", what.c_str(),
              p, p_ref, p - p_ref, tol, ok ? "" : "  FAIL");
  return ok;
}

/// Engine allowances of one cell, in reference sds (see the header), and whether its returns get the KS test.
struct Allowance {
  double returns = 0, lengths = 0, rates = 0;
  bool ks_test = false;
};
constexpr Allowance kLanderHeuristic{.returns = 0, .lengths = kEngineSd, .rates = 0, .ks_test = true};
constexpr Allowance kLanderRandom{.returns = kEngineSd, .lengths = kEngineSd, .rates = kEngineSd, .ks_test = false};
constexpr Allowance kWalker{.returns = kEngineSd, .lengths = kEngineSd, .rates = kEngineSd, .ks_test = false};

/// Every check of one cell against the reference's record of it.
void compare_cell(const std::string& name, const Sample& ours, const Allowance& allow) {
  const json& ref = reference().at("cells").at(name);
  const int n_ref = ref.at("n").get<int>();
  std::printf("%s (n = %d ours, %d gymnasium %s)\n", name.c_str(), ours.n(), n_ref,
              reference().at("versions").at("gymnasium").get<std::string>().c_str());
  INFO(name);
  const double sd_ref = ref.at("return_sd").get<double>();
  CHECK(close_means("return", mean(ours.returns), sd(ours.returns), ours.n(), ref.at("return_mean").get<double>(),
                    sd_ref, n_ref, allow.returns * sd_ref));
  const double length_sd_ref = ref.at("length_sd").get<double>();
  CHECK(close_means("length", mean(ours.lengths), sd(ours.lengths), ours.n(), ref.at("length_mean").get<double>(),
                    length_sd_ref, n_ref, allow.lengths * length_sd_ref));
  if (ref.contains("first_contact_mean")) {  // lander: the end of the free flight, no allowance
    const int touched = static_cast<int>(ours.first_contacts.size());
    CHECK(close_rates("first contact rate", touched, ours.n(), ref.at("first_contact_rate").get<double>(), n_ref, 0));
    const double rate_ref = ref.at("first_contact_rate").get<double>();
    const int touched_ref = static_cast<int>(std::lround(rate_ref * n_ref));
    REQUIRE(touched > 1);
    REQUIRE(touched_ref > 1);
    CHECK(close_means("first contact step", mean(ours.first_contacts), sd(ours.first_contacts), touched,
                      ref.at("first_contact_mean").get<double>(), ref.at("first_contact_sd").get<double>(), touched_ref,
                      0));
  }
  for (const auto& [cause, rate] : ref.at("end_rates").items()) {
    const auto it = ours.causes.find(cause);
    const int k = it == ours.causes.end() ? 0 : it->second;
    INFO("terminal cause " << cause);
    CHECK(close_rates("rate " + cause, k, ours.n(), rate.get<double>(), n_ref, allow.rates));
  }
  const double d = ks_statistic(ours.returns, ref.at("returns").get<std::vector<double>>());
  const double d_crit = kKsCoefficient * std::sqrt(static_cast<double>(ours.n() + n_ref) / (ours.n() * n_ref));
  std::printf("  %-22s D %.3f  critical %.3f (alpha 0.001)%s\n", "KS on returns", d, d_crit,
              allow.ks_test ? (d <= d_crit ? "" : "  FAIL") : "  (printed, not tested)");
  if (allow.ks_test) CHECK(d <= d_crit);
}

// ---- our side of the cells ----

template <class Policy>
Sample play_lander(const LunarLanderConfig& config, Policy policy) {
  LunarLander env(config.continuous ? "LunarLanderContinuous-v3" : "LunarLander-v3", config);
  Sample sample;
  std::vector<float> obs(8), action(config.continuous ? 2 : 1);
  for (int e = 0; e < kEpisodes; ++e) {
    const uint64_t seed = kSeedBase + static_cast<uint64_t>(e);
    env.reset(seed, obs);
    Rng rng(kPolicySeedBase + seed);
    double ret = 0, length = 0;
    bool touched = false;
    for (;;) {
      policy(obs, rng, action);
      const auto r = env.step(action, obs);
      ret += r.reward;
      length += 1;
      if (!touched && (obs[6] != 0.0f || obs[7] != 0.0f)) {
        touched = true;
        sample.first_contacts.push_back(length);
      }
      if (r.terminated || r.truncated) {
        const char* cause = "truncated";
        if (r.terminated) {
          switch (env.end_cause()) {
            case LanderEnd::landed:
              cause = "landed";
              break;
            case LanderEnd::crashed:
              cause = "crashed";
              break;
            case LanderEnd::out_of_bounds:
              cause = "out_of_bounds";
              break;
            case LanderEnd::none:
              cause = "none";
              break;  // never: a terminated episode has a cause
          }
        }
        ++sample.causes[cause];
        break;
      }
    }
    sample.returns.push_back(ret);
    sample.lengths.push_back(length);
  }
  return sample;
}

void lander_heuristic(const std::vector<float>& obs, Rng&, std::vector<float>& action) {
  if (action.size() == 1) {
    action[0] = rlm::envs::test::lunar_lander_heuristic_discrete(obs);
  } else {
    const auto a = rlm::envs::test::lunar_lander_heuristic_continuous(obs);
    action[0] = a[0];
    action[1] = a[1];
  }
}

void lander_random(const std::vector<float>&, Rng& rng, std::vector<float>& action) {
  if (action.size() == 1) {
    action[0] = static_cast<float>(rng.uniform_int(4));
  } else {
    for (float& a : action) a = static_cast<float>(rng.uniform(-1.0, 1.0));
  }
}

Sample play_walker(bool hardcore, bool heuristic) {
  BipedalWalker env(hardcore ? "BipedalWalkerHardcore-v3" : "BipedalWalker-v3", {.hardcore = hardcore});
  Sample sample;
  std::vector<float> obs(24);
  for (int e = 0; e < kEpisodes; ++e) {
    const uint64_t seed = kSeedBase + static_cast<uint64_t>(e);
    env.reset(seed, obs);
    Rng rng(kPolicySeedBase + seed);
    rlm::envs::test::BipedalWalkerHeuristic controller;
    double ret = 0, length = 0;
    for (bool first = true;; first = false) {
      std::array<float, 4> a{};
      if (!heuristic) {
        for (float& v : a) v = static_cast<float>(rng.uniform(-1.0, 1.0));
      } else if (!first) {  // Gymnasium's demo loop: zero action on the first step
        a = controller.act(obs);
      }
      const auto r = env.step(a, obs);
      ret += r.reward;
      length += 1;
      if (r.terminated || r.truncated) {
        const char* cause = "truncated";
        if (r.terminated) {
          switch (env.end_cause()) {
            case WalkerEnd::finished:
              cause = "finished";
              break;
            case WalkerEnd::fell:
              cause = "fell";
              break;
            case WalkerEnd::out_of_bounds:
              cause = "out_of_bounds";
              break;
            case WalkerEnd::none:
              cause = "none";
              break;
          }
        }
        ++sample.causes[cause];
        break;
      }
    }
    sample.returns.push_back(ret);
    sample.lengths.push_back(length);
  }
  return sample;
}

/// Reset observations over our seeds against the reference's per-element statistics (see the header).
template <class Env>
void compare_reset(const std::string& name, Env& env, int dim) {
  const json& ref = reference().at("reset").at(name);
  const int n_ref = ref.at("n").get<int>();
  std::vector<std::vector<double>> columns(static_cast<size_t>(dim));
  std::vector<float> obs(static_cast<size_t>(dim));
  for (int e = 0; e < kEpisodes; ++e) {
    env.reset(kSeedBase + static_cast<uint64_t>(e), obs);
    for (int i = 0; i < dim; ++i) columns[static_cast<size_t>(i)].push_back(obs[static_cast<size_t>(i)]);
  }
  std::printf("reset %s (n = %d ours, %d gymnasium): element: ours mean sd [min, max] | gymnasium's\n", name.c_str(),
              kEpisodes, n_ref);
  for (int i = 0; i < dim; ++i) {
    const auto& c = columns[static_cast<size_t>(i)];
    const double m = mean(c), s = sd(c);
    const double lo = *std::min_element(c.begin(), c.end()), hi = *std::max_element(c.begin(), c.end());
    const double m_ref = ref.at("mean").at(i).get<double>(), s_ref = ref.at("sd").at(i).get<double>();
    const double lo_ref = ref.at("min").at(i).get<double>(), hi_ref = ref.at("max").at(i).get<double>();
    const double q05_ref = ref.at("q05").at(i).get<double>(), q95_ref = ref.at("q95").at(i).get<double>();
    const double width = hi_ref - lo_ref;
    double m4 = 0;
    for (double x : c) m4 += std::pow(x - m, 4) / kEpisodes;
    const double kurtosis = s > 0 ? m4 / (s * s * s * s) : 3.0;
    const double mean_tol = kZ * std::sqrt(s * s / kEpisodes + s_ref * s_ref / n_ref) + kResetEngine;
    const double sd_tol =
        kZ * s_ref * std::sqrt(std::max(kurtosis - 1, 0.0) / 4 * (1.0 / kEpisodes + 1.0 / n_ref)) + kResetEngine;
    const bool mean_ok = std::abs(m - m_ref) <= mean_tol;
    const bool sd_ok = std::abs(s - s_ref) <= sd_tol;
    const bool inside = lo >= lo_ref - 0.05 * width - kResetEngine && hi <= hi_ref + 0.05 * width + kResetEngine;
    const bool covers = lo <= q05_ref + kResetEngine && hi >= q95_ref - kResetEngine;
    std::printf("  s%-2d %9.5f %8.5f [%9.5f, %9.5f] | %9.5f %8.5f [%9.5f, %9.5f]%s%s%s%s\n", i, m, s, lo, hi, m_ref,
                s_ref, lo_ref, hi_ref, mean_ok ? "" : "  MEAN", sd_ok ? "" : "  SD", inside ? "" : "  OUTSIDE",
                covers ? "" : "  SHORT");
    INFO(name << " reset s" << i << ": ours mean " << m << " sd " << s << " [" << lo << ", " << hi
              << "], gymnasium mean " << m_ref << " sd " << s_ref << " [" << lo_ref << ", " << hi_ref << "]");
    CHECK(mean_ok);
    CHECK(sd_ok);
    CHECK(inside);
    CHECK(covers);
  }
}

}  // namespace

TEST_CASE("gymnasium reference: the recording is the one these checks expect", "[box2d][gymnasium_reference]") {
  const json& ref = reference();
  INFO("tests/data/box2d/gymnasium_reference.json: re-record with scripts/record_gymnasium_box2d.py");
  CHECK(ref.at("versions").at("box2d").get<std::string>().rfind("2.3", 0) == 0);  // pybox2d's Box2D 2.3
  CHECK(ref.at("n").get<int>() >= 1000);
  for (const char* cell :
       {"lunar_lander_discrete_heuristic", "lunar_lander_continuous_heuristic", "lunar_lander_discrete_random",
        "lunar_lander_continuous_random", "lunar_lander_discrete_wind_heuristic",
        "lunar_lander_continuous_wind_heuristic", "bipedal_walker_heuristic", "bipedal_walker_hardcore_heuristic",
        "bipedal_walker_random", "bipedal_walker_hardcore_random"}) {
    INFO(cell);
    REQUIRE(ref.at("cells").contains(cell));
    const json& c = ref.at("cells").at(cell);
    CHECK(c.at("returns").size() == c.at("n").get<size_t>());
    if (std::string(cell).rfind("lunar_lander", 0) == 0) CHECK(c.contains("first_contact_mean"));
    if (c.contains("heuristic_check")) {  // the recording's controller acted as Gymnasium's own heuristic
      CHECK(c.at("heuristic_check").at("discrete_mismatches").get<int>() == 0);
      CHECK(c.at("heuristic_check").at("max_abs_action_diff").get<double>() < 1e-5);
    }
  }
  // As envpool's figure for Gymnasium implies (283.87 ± 18.88, docs/envs/box2d.md) and the recording shows: the
  // continuous lander heuristic lands almost always.
  CHECK(ref.at("cells").at("lunar_lander_continuous_heuristic").at("success_rate").get<double>() > 0.95);
}

TEST_CASE("gymnasium reference: lunar lander returns, lengths and terminal causes",
          "[box2d][gymnasium_reference][slow]") {
  const auto started = std::chrono::steady_clock::now();
  LunarLanderConfig discrete, continuous;
  continuous.continuous = true;
  LunarLanderConfig wind = discrete, continuous_wind = continuous;
  wind.enable_wind = continuous_wind.enable_wind = true;  // wind_power 15, turbulence_power 1.5 (Gymnasium's)
  compare_cell("lunar_lander_discrete_heuristic", play_lander(discrete, lander_heuristic), kLanderHeuristic);
  compare_cell("lunar_lander_continuous_heuristic", play_lander(continuous, lander_heuristic), kLanderHeuristic);
  compare_cell("lunar_lander_discrete_random", play_lander(discrete, lander_random), kLanderRandom);
  compare_cell("lunar_lander_continuous_random", play_lander(continuous, lander_random), kLanderRandom);
  compare_cell("lunar_lander_discrete_wind_heuristic", play_lander(wind, lander_heuristic), kLanderHeuristic);
  compare_cell("lunar_lander_continuous_wind_heuristic", play_lander(continuous_wind, lander_heuristic),
               kLanderHeuristic);
  std::printf("lunar lander cells: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

TEST_CASE("gymnasium reference: bipedal walker heuristic", "[box2d][gymnasium_reference][slow]") {
  compare_cell("bipedal_walker_heuristic", play_walker(false, true), kWalker);
  compare_cell("bipedal_walker_hardcore_heuristic", play_walker(true, true), kWalker);
}

TEST_CASE("gymnasium reference: bipedal walker random actions", "[box2d][gymnasium_reference][slow]") {
  compare_cell("bipedal_walker_random", play_walker(false, false), kWalker);
  compare_cell("bipedal_walker_hardcore_random", play_walker(true, false), kWalker);
}

TEST_CASE("gymnasium reference: reset observations", "[box2d][gymnasium_reference]") {
  LunarLanderConfig wind;
  wind.enable_wind = true;
  LunarLander lander("LunarLander-v3", {}), lander_wind("LunarLander-v3", wind);
  BipedalWalker walker("BipedalWalker-v3", {}), hardcore("BipedalWalkerHardcore-v3", {.hardcore = true});
  compare_reset("lunar_lander", lander, 8);
  compare_reset("lunar_lander_wind", lander_wind, 8);
  compare_reset("bipedal_walker", walker, 24);
  compare_reset("bipedal_walker_hardcore", hardcore, 24);
}
