// The POMDP variants of the Box2D tasks (docs/envs/box2d.md): the -P/-V masks, the KF paper's observation noise and
// the optional action noise, all built by the registry (make_env) as a trainer gets them. Every comparison replays
// one recorded action sequence on several envs with one seed, so any difference comes from the wrapper alone. The
// expected index lists are written out here from the docs page, not read from observation_masks.hpp.
#include <algorithm>
#include <array>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "box2d/bipedal_walker_policies.hpp"
#include "box2d/lunar_lander_policies.hpp"
#include "core/error.hpp"
#include "envs/box2d/partial_observation.hpp"
#include "envs/registry.hpp"
#include "envs/rng.hpp"

using rlm::EnvOptions;
using rlm::envs::Env;
using rlm::envs::Space;
using rlm::envs::StepResult;

namespace {

using Obs = std::vector<float>;
using Actions = std::vector<std::vector<float>>;

const std::array<std::string, 4> kBases = {"box2d/LunarLander", "box2d/LunarLanderContinuous", "box2d/BipedalWalker",
                                           "box2d/BipedalWalkerHardcore"};

bool is_walker(const std::string& id) { return id.find("BipedalWalker") != std::string::npos; }

/// make_env with no decorator at all, so the obs is exactly what the box2d family writes.
std::unique_ptr<Env> make(const std::string& id, const EnvOptions& options = {}) {
  rlm::envs::WrapperOptions raw;
  raw.previous_action = false;
  raw.antialias = false;
  raw.flatten = false;
  raw.discrete_action = false;
  return rlm::envs::make_env(id, raw, options);
}

EnvOptions obs_noise(double sigma, bool on_binary = true) {
  EnvOptions o;
  o.obs_noise_sigma = sigma;
  o.noise_on_binary = on_binary;
  return o;
}

EnvOptions action_noise(double sigma) {
  EnvOptions o;
  o.action_noise_sigma = sigma;
  return o;
}

/// The kept indices docs/envs/box2d.md lists (written out here on purpose; the wrapper's table is what is under test).
std::vector<int> expected_kept(const std::string& base, char variant, bool lidar_in_p = true,
                               bool contacts_in_v = false) {
  if (!is_walker(base)) {
    if (variant == 'P') return {0, 1, 4, 6, 7};  // x, y, angle, both leg contacts
    if (variant == 'V') return {2, 3, 5, 6, 7};  // vx, vy, angular velocity, both leg contacts
    return {0, 1, 2, 3, 4, 5, 6, 7};
  }
  if (variant == 'P') {
    // Hull angle 0, joint angles 4, 6, 9, 11, contacts 8, 13, lidar 14..23: 1 + 4 + 2 + 10 = 17 (of 24 = 17
    // positions + 7 velocities).
    std::vector<int> p = {0, 4, 6, 8, 9, 11, 13};
    if (lidar_in_p)
      for (int i = 14; i < 24; ++i) p.push_back(i);
    return p;
  }
  if (variant == 'V') {
    if (contacts_in_v) return {1, 2, 3, 5, 7, 8, 10, 12, 13};  // V dim 9
    return {1, 2, 3, 5, 7, 10, 12};                            // hull ω, vx, vy, joint speeds
  }
  std::vector<int> f;
  for (int i = 0; i < 24; ++i) f.push_back(i);
  return f;
}

/// The 0/1 flags of the full obs (leg contacts).
std::vector<int> binary_indices(const std::string& base) {
  return is_walker(base) ? std::vector<int>{8, 13} : std::vector<int>{6, 7};
}

enum class Policy { heuristic, random, stand };

/// Plays `policy` on the noiseless full-observation env and returns the actions it took (until the episode ends or
/// `max_steps`). The policy sees the true state; the actions are then replayed blind on the other variants.
Actions record_actions(const std::string& base, uint64_t seed, Policy policy, int max_steps,
                       const EnvOptions& options = {}) {
  auto env = make(base, options);
  const bool continuous = env->action_space().kind == Space::Kind::Box;
  Obs obs(static_cast<size_t>(env->observation_space().raw_size()));
  env->reset(seed, obs);
  rlm::envs::Rng rng(seed * 7919 + 17);
  rlm::envs::test::BipedalWalkerHeuristic walker;
  Actions actions;
  for (int t = 0; t < max_steps; ++t) {
    std::vector<float> a;
    if (policy == Policy::random) {
      if (continuous) {
        for (size_t k = 0; k < env->action_space().low.size(); ++k)
          a.push_back(static_cast<float>(rng.uniform(-1.0, 1.0)));
      } else {
        a.push_back(static_cast<float>(rng.uniform_int(4)));
      }
    } else if (policy == Policy::stand) {
      const auto s = rlm::envs::test::bipedal_walker_stand(obs);
      a.assign(s.begin(), s.end());
    } else if (is_walker(base)) {
      const auto s = t == 0 ? std::array<float, 4>{} : walker.act(obs);  // Gymnasium's demo: zero first action
      a.assign(s.begin(), s.end());
    } else if (continuous) {
      const auto s = rlm::envs::test::lunar_lander_heuristic_continuous(obs);
      a.assign(s.begin(), s.end());
    } else {
      a.push_back(rlm::envs::test::lunar_lander_heuristic_discrete(obs));
    }
    actions.push_back(a);
    const StepResult r = env->step(a, obs);
    if (r.terminated || r.truncated) break;
  }
  return actions;
}

struct Trajectory {
  std::vector<Obs> obs;  ///< the reset obs, then one per step
  std::vector<StepResult> results;
};

Trajectory replay(Env& env, uint64_t seed, const Actions& actions) {
  Trajectory t;
  Obs obs(static_cast<size_t>(env.observation_space().raw_size()));
  env.reset(seed, obs);
  t.obs.push_back(obs);
  for (const auto& a : actions) {
    const StepResult r = env.step(a, obs);
    t.obs.push_back(obs);
    t.results.push_back(r);
    if (r.terminated || r.truncated) break;
  }
  return t;
}

Trajectory replay(const std::string& id, const EnvOptions& options, uint64_t seed, const Actions& actions) {
  auto env = make(id, options);
  return replay(*env, seed, actions);
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

/// "" when every element of `masked` (obs[k] at step t) is bitwise the element kept[k] of `full`; otherwise how
/// many are not and where the first one is.
std::string mask_report(const Trajectory& full, const Trajectory& masked, const std::vector<int>& kept) {
  if (full.obs.size() != masked.obs.size())
    return "lengths " + std::to_string(full.obs.size()) + " vs " + std::to_string(masked.obs.size());
  int64_t bad = 0;
  std::string first;
  for (size_t t = 0; t < full.obs.size(); ++t) {
    if (masked.obs[t].size() != kept.size()) return "obs size " + std::to_string(masked.obs[t].size());
    for (size_t k = 0; k < kept.size(); ++k) {
      const float f = full.obs[t][static_cast<size_t>(kept[k])];
      if (!same_bits(masked.obs[t][k], f) && bad++ == 0)
        first = "step " + std::to_string(t) + " element " + std::to_string(k) + " (full index " +
                std::to_string(kept[k]) + "): " + std::to_string(masked.obs[t][k]) + " vs " + std::to_string(f);
    }
  }
  return bad == 0 ? "" : std::to_string(bad) + " mismatches, first at " + first;
}

/// "" when both have the same number of steps and every step's reward (bitwise), terminated, truncated and success
/// agree; otherwise how many steps differ and the first.
std::string result_report(const Trajectory& a, const Trajectory& b) {
  if (a.results.size() != b.results.size())
    return "lengths " + std::to_string(a.results.size()) + " vs " + std::to_string(b.results.size());
  int64_t bad = 0;
  std::string first;
  for (size_t t = 0; t < a.results.size(); ++t) {
    const StepResult &x = a.results[t], &y = b.results[t];
    if ((!same_bits(x.reward, y.reward) || x.terminated != y.terminated || x.truncated != y.truncated ||
         x.success != y.success) &&
        bad++ == 0)
      first = "step " + std::to_string(t) + ": reward " + std::to_string(x.reward) + " vs " + std::to_string(y.reward) +
              ", terminated " + std::to_string(x.terminated) + " vs " + std::to_string(y.terminated) + ", truncated " +
              std::to_string(x.truncated) + " vs " + std::to_string(y.truncated) + ", success " +
              std::to_string(x.success) + " vs " + std::to_string(y.success);
  }
  return bad == 0 ? "" : std::to_string(bad) + " steps differ, first at " + first;
}

bool same_obs(const Obs& a, const Obs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}

bool same_trajectory(const Trajectory& a, const Trajectory& b) {
  if (a.obs.size() != b.obs.size()) return false;
  for (size_t t = 0; t < a.obs.size(); ++t)
    if (!same_obs(a.obs[t], b.obs[t])) return false;
  return result_report(a, b).empty();
}

/// noisy − clean per element, one column per full-obs element, one row per obs (reset and steps).
std::vector<std::vector<double>> differences(const Trajectory& noisy, const Trajectory& clean) {
  REQUIRE(noisy.obs.size() == clean.obs.size());
  std::vector<std::vector<double>> d(noisy.obs.front().size());
  for (size_t t = 0; t < noisy.obs.size(); ++t)
    for (size_t i = 0; i < d.size(); ++i)
      d[i].push_back(static_cast<double>(noisy.obs[t][i]) - static_cast<double>(clean.obs[t][i]));
  return d;
}

double mean(const std::vector<double>& x) {
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double stddev(const std::vector<double>& x) {
  const double m = mean(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return std::sqrt(s / static_cast<double>(x.size() - 1));
}

double correlation(std::span<const double> x, std::span<const double> y) {
  const size_t n = std::min(x.size(), y.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(n);
  my /= static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

/// A Box-action env whose obs is a fixed vector and which records the actions it is handed, to see exactly what
/// PartialObservation passes on.
class RecordingEnv final : public Env {
 public:
  RecordingEnv()
      : observation_space_(Space::box({-1, -1, -1}, {1, 1, 1})), action_space_(Space::box({-1, -1}, {1, 1})) {}
  const std::string& id() const override { return id_; }
  const Space& observation_space() const override { return observation_space_; }
  const Space& action_space() const override { return action_space_; }
  int64_t max_episode_steps() const override { return 1000000; }
  void reset(uint64_t, std::span<float> obs) override { std::fill(obs.begin(), obs.end(), 0.25f); }
  StepResult step(std::span<const float> action, std::span<float> obs) override {
    actions.emplace_back(action.begin(), action.end());
    std::fill(obs.begin(), obs.end(), 0.25f);
    return {};
  }
  std::vector<std::vector<float>> actions;

 private:
  std::string id_ = "test/Recording";
  Space observation_space_, action_space_;
};

}  // namespace

TEST_CASE("box2d pomdp: P and V ids keep exactly the documented indices of the full obs",
          "[box2d][partial_observation]") {
  for (const std::string& base : kBases) {
    auto full_env = make(base);
    const Space& full_space = full_env->observation_space();
    REQUIRE(full_space.low.size() == (is_walker(base) ? 24u : 8u));
    for (const char variant : {'P', 'V'}) {
      const std::string id = base + "-" + variant;
      INFO(id);
      const std::vector<int> kept = expected_kept(base, variant);
      auto env = make(id);
      CHECK(env->id() == id);
      CHECK(env->action_space() == full_env->action_space());
      CHECK(env->max_episode_steps() == full_env->max_episode_steps());
      CHECK(env->reports_success());
      // The observation space is the full Box sliced by the kept indices.
      const Space& space = env->observation_space();
      REQUIRE(space.kind == Space::Kind::Box);
      REQUIRE(space.low.size() == kept.size());
      CHECK(space.shape == std::vector<int64_t>{static_cast<int64_t>(kept.size())});
      for (size_t k = 0; k < kept.size(); ++k) {
        CHECK(same_bits(space.low[k], full_space.low[static_cast<size_t>(kept[k])]));
        CHECK(same_bits(space.high[k], full_space.high[static_cast<size_t>(kept[k])]));
      }
      // The values: bitwise the full obs at those indices, on every step of heuristic and random episodes.
      for (uint64_t seed : {3ull, 11ull}) {
        for (Policy policy : {Policy::heuristic, Policy::random}) {
          const Actions actions = record_actions(base, seed, policy, 400);
          const Trajectory full = replay(*full_env, seed, actions);
          const Trajectory masked = replay(*env, seed, actions);
          INFO("seed " << seed << " policy " << static_cast<int>(policy));
          CHECK(mask_report(full, masked, kept) == "");
          CHECK(result_report(full, masked) == "");
          CHECK(full.results.size() >= 10);
        }
      }
    }
  }
  // The dims (the walker's P is 17: see expected_kept).
  CHECK(make("box2d/LunarLander-P")->observation_space().raw_size() == 5);
  CHECK(make("box2d/LunarLanderContinuous-V")->observation_space().raw_size() == 5);
  CHECK(make("box2d/BipedalWalker-P")->observation_space().raw_size() == 17);
  CHECK(make("box2d/BipedalWalkerHardcore-V")->observation_space().raw_size() == 7);
}

TEST_CASE("box2d pomdp: lidar_in_p and contacts_in_v change the walker masks as documented",
          "[box2d][partial_observation]") {
  EnvOptions no_lidar;
  no_lidar.lidar_in_p = false;
  EnvOptions contacts;
  contacts.contacts_in_v = true;
  for (const std::string base : {"box2d/BipedalWalker", "box2d/BipedalWalkerHardcore"}) {
    const Actions actions = record_actions(base, 5, Policy::random, 120);
    const Trajectory full = replay(base, {}, 5, actions);
    const Space full_space = make(base)->observation_space();
    struct Case {
      char variant;
      EnvOptions options;
      std::vector<int> kept;
    };
    const std::vector<Case> cases = {
        {'P', no_lidar, expected_kept(base, 'P', false, false)},  // {0, 4, 6, 8, 9, 11, 13}
        {'V', contacts, expected_kept(base, 'V', true, true)},    // {1, 2, 3, 5, 7, 8, 10, 12, 13}
        {'P', contacts, expected_kept(base, 'P')},                // contacts_in_v leaves P alone
        {'V', no_lidar, expected_kept(base, 'V')},                // lidar is never in V
    };
    CHECK(cases[0].kept.size() == 7);
    CHECK(cases[1].kept.size() == 9);
    for (const Case& c : cases) {
      const std::string id = base + "-" + c.variant;
      INFO(id << " lidar_in_p " << c.options.lidar_in_p << " contacts_in_v " << c.options.contacts_in_v);
      auto env = make(id, c.options);
      REQUIRE(env->observation_space().low.size() == c.kept.size());
      for (size_t k = 0; k < c.kept.size(); ++k) {
        CHECK(same_bits(env->observation_space().low[k], full_space.low[static_cast<size_t>(c.kept[k])]));
        CHECK(same_bits(env->observation_space().high[k], full_space.high[static_cast<size_t>(c.kept[k])]));
      }
      CHECK(mask_report(full, replay(*env, 5, actions), c.kept) == "");
    }
    // The full id ignores both options.
    EnvOptions both;
    both.lidar_in_p = false;
    both.contacts_in_v = true;
    CHECK(make(base, both)->observation_space().raw_size() == 24);
  }
}

TEST_CASE("box2d pomdp: masks and noise never change rewards terminations truncations or success",
          "[box2d][partial_observation]") {
  int64_t successes = 0, terminations = 0;
  for (const std::string& base : kBases) {
    const std::vector<EnvOptions> option_sets = {obs_noise(0.3), obs_noise(0.1, false), obs_noise(1.0)};
    for (uint64_t seed : {1ull, 2ull, 7ull}) {
      const Actions actions = record_actions(base, seed, Policy::heuristic, is_walker(base) ? 500 : 1000);
      const Trajectory full = replay(base, {}, seed, actions);
      for (const StepResult& r : full.results) {
        successes += r.success;
        terminations += r.terminated;
      }
      for (const std::string suffix : {"", "-P", "-V"}) {
        for (const EnvOptions& o : option_sets) {
          INFO(base << suffix << " seed " << seed << " sigma " << o.obs_noise_sigma << " on_binary "
                    << o.noise_on_binary);
          CHECK(result_report(full, replay(base + suffix, o, seed, actions)) == "");
        }
      }
    }
  }
  // The comparison saw episode ends, including landings (the heuristic lands most lander episodes).
  CHECK(successes >= 2);
  CHECK(terminations >= 6);

  // Truncation: the stance controller keeps the walker up until the 1600-step limit under Box2D 2.4.1's own joint
  // limits (under 2.3's, the default, it falls after 100-170 steps, as Gymnasium's walker does).
  EnvOptions standing;
  standing.box2d23_limits = false;
  const Actions stand = record_actions("box2d/BipedalWalker", 4, Policy::stand, 2000, standing);
  REQUIRE(stand.size() == 1600);
  const Trajectory full = replay("box2d/BipedalWalker", standing, 4, stand);
  REQUIRE(full.results.back().truncated);
  for (const std::string id : {"box2d/BipedalWalker-P", "box2d/BipedalWalker-V"}) {
    INFO(id);
    EnvOptions noisy = obs_noise(0.3);
    noisy.box2d23_limits = false;
    const Trajectory t = replay(id, noisy, 4, stand);
    CHECK(result_report(full, t) == "");
    CHECK(t.results.back().truncated);
    CHECK_FALSE(t.results.back().terminated);
  }
}

TEST_CASE("box2d pomdp: observation noise is zero-mean Gaussian with std sigma and independent",
          "[box2d][partial_observation][statistical]") {
  struct Case {
    std::string id;
    double sigma;
    int seeds;
    int max_steps;
  };
  // The lander's heuristic episodes last ~200-400 steps, so 16 seeds give a few thousand obs; the walker is capped.
  for (const Case& c : {Case{"box2d/LunarLander", 0.3, 16, 1000}, Case{"box2d/LunarLanderContinuous", 0.1, 16, 1000},
                        Case{"box2d/BipedalWalker", 0.3, 8, 400}}) {
    INFO(c.id << " sigma " << c.sigma);
    std::vector<std::vector<double>> d;
    for (int s = 0; s < c.seeds; ++s) {
      const auto seed = static_cast<uint64_t>(100 + s);
      const Actions actions = record_actions(c.id, seed, Policy::heuristic, c.max_steps);
      const auto ds = differences(replay(c.id, obs_noise(c.sigma), seed, actions), replay(c.id, {}, seed, actions));
      if (d.empty()) d.resize(ds.size());
      for (size_t i = 0; i < ds.size(); ++i) d[i].insert(d[i].end(), ds[i].begin(), ds[i].end());
    }
    const double n = static_cast<double>(d[0].size());
    REQUIRE(n >= 2000);
    // 5-standard-error bands: the sample mean has std σ/√n, the sample std about σ/√(2n), a correlation 1/√n.
    const double mean_tol = 5 * c.sigma / std::sqrt(n), std_tol = 5 * c.sigma / std::sqrt(2 * n),
                 corr_tol = 5 / std::sqrt(n);
    std::vector<double> pooled;
    double worst_corr = 0, worst_lag = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      INFO("element " << i << " n " << n << " mean " << mean(d[i]) << " std " << stddev(d[i]));
      CHECK(std::abs(mean(d[i])) < mean_tol);
      CHECK(std::abs(stddev(d[i]) - c.sigma) < std_tol);
      // Independent over time: the lag-1 autocorrelation vanishes.
      const double lag = correlation(std::span(d[i]).first(d[i].size() - 1), std::span(d[i]).subspan(1));
      worst_lag = std::max(worst_lag, std::abs(lag));
      CHECK(std::abs(lag) < corr_tol);
      // Independent across elements.
      for (size_t j = 0; j < i; ++j) {
        const double r = correlation(d[i], d[j]);
        worst_corr = std::max(worst_corr, std::abs(r));
        INFO("elements " << i << ", " << j << " correlation " << r);
        CHECK(std::abs(r) < corr_tol);
      }
      pooled.insert(pooled.end(), d[i].begin(), d[i].end());
    }
    // Pooled: mean, std and the Gaussian shape (68.27% within one σ, 95.45% within two).
    const double N = static_cast<double>(pooled.size());
    double within1 = 0, within2 = 0;
    for (double v : pooled) {
      within1 += std::abs(v) < c.sigma;
      within2 += std::abs(v) < 2 * c.sigma;
    }
    within1 /= N;
    within2 /= N;
    INFO("pooled n " << N << " mean " << mean(pooled) << " std " << stddev(pooled) << " within 1 sigma " << within1
                     << " within 2 sigma " << within2 << " worst |corr| " << worst_corr << " worst |lag-1| "
                     << worst_lag << " (tolerance " << corr_tol << ")");
    CHECK(std::abs(mean(pooled)) < 5 * c.sigma / std::sqrt(N));
    CHECK(std::abs(stddev(pooled) - c.sigma) < 5 * c.sigma / std::sqrt(2 * N));
    CHECK(std::abs(within1 - 0.682689) < 5 * std::sqrt(0.682689 * (1 - 0.682689) / N));
    CHECK(std::abs(within2 - 0.954500) < 5 * std::sqrt(0.9545 * (1 - 0.9545) / N));
  }
}

TEST_CASE("box2d pomdp: noise depends on the seed only and F P V share it on common elements",
          "[box2d][partial_observation]") {
  for (const std::string base : {"box2d/LunarLanderContinuous", "box2d/BipedalWalkerHardcore"}) {
    INFO(base);
    const EnvOptions noisy = obs_noise(0.3);
    const Actions actions = record_actions(base, 21, Policy::random, 150);
    const Trajectory f = replay(base, noisy, 21, actions);
    const Trajectory clean = replay(base, {}, 21, actions);
    REQUIRE(f.obs.size() > 20);
    // Common elements: the P and V obs are the noisy F obs at the kept indices, bit for bit.
    for (const char variant : {'P', 'V'}) {
      INFO(variant);
      CHECK(mask_report(f, replay(base + "-" + variant, noisy, 21, actions), expected_kept(base, variant)) == "");
    }
    // The same seed gives the same noise in a fresh env and in one that has played other episodes before.
    auto env = make(base, noisy);
    (void)replay(*env, 22, actions);
    (void)replay(*env, 23, record_actions(base, 23, Policy::random, 50));
    CHECK(same_trajectory(replay(*env, 21, actions), f));
    // Another seed gives other noise. The physics differs too, so compare the noise itself (noisy − clean).
    const Trajectory f2 = replay(base, noisy, 22, actions);
    const auto d1 = differences(f, clean), d2 = differences(f2, replay(base, {}, 22, actions));
    const size_t steps = std::min(d1[0].size(), d2[0].size());
    REQUIRE(steps > 20);
    int64_t equal = 0;
    std::vector<double> a, b;
    for (size_t i = 0; i < d1.size(); ++i)
      for (size_t t = 0; t < steps; ++t) {
        equal += d1[i][t] == d2[i][t];
        a.push_back(d1[i][t]);
        b.push_back(d2[i][t]);
      }
    CHECK(equal == 0);
    CHECK(std::abs(correlation(a, b)) < 5 / std::sqrt(static_cast<double>(a.size())));
    // Noise is added on top of the true obs: the noise actually moved every element.
    const auto d = differences(f, clean);
    for (size_t i = 0; i < d.size(); ++i) CHECK(std::count(d[i].begin(), d[i].end(), 0.0) == 0);
  }
}

TEST_CASE("box2d pomdp: noise_on_binary false leaves only the contact flags exact", "[box2d][partial_observation]") {
  for (const std::string base : {"box2d/LunarLander", "box2d/BipedalWalker"}) {
    INFO(base);
    const std::vector<int> binary = binary_indices(base);
    // A stance keeps the walker's feet down and the lander's heuristic lands, so flags of both values are seen.
    const Actions actions = record_actions(base, 8, is_walker(base) ? Policy::stand : Policy::heuristic, 300);
    const Trajectory clean = replay(base, {}, 8, actions);
    const Trajectory exempt = replay(base, obs_noise(0.3, false), 8, actions);
    const Trajectory literal = replay(base, obs_noise(0.3, true), 8, actions);
    REQUIRE(clean.obs.size() == exempt.obs.size());
    REQUIRE(clean.obs.size() == literal.obs.size());
    int64_t ones = 0, zeros = 0, not_flags = 0, flags_inexact = 0, flags_clean_in_literal = 0, continuous_clean = 0,
            continuous_other_noise = 0;
    for (size_t t = 0; t < clean.obs.size(); ++t) {
      for (size_t i = 0; i < clean.obs[t].size(); ++i) {
        const bool flag = std::find(binary.begin(), binary.end(), static_cast<int>(i)) != binary.end();
        if (flag) {
          const float v = clean.obs[t][i];
          not_flags += !(v == 0.0f || v == 1.0f);
          ones += v == 1.0f;
          zeros += v == 0.0f;
          flags_inexact += !same_bits(exempt.obs[t][i], v);  // exempt: exact
          flags_clean_in_literal += literal.obs[t][i] == v;  // the literal protocol noises them
        } else {
          continuous_clean += exempt.obs[t][i] == clean.obs[t][i];
          // Noise is drawn for every element either way, so the other elements get the same noise.
          continuous_other_noise += !same_bits(exempt.obs[t][i], literal.obs[t][i]);
        }
      }
    }
    CHECK(not_flags == 0);
    CHECK(flags_inexact == 0);
    CHECK(flags_clean_in_literal == 0);
    CHECK(continuous_clean == 0);
    CHECK(continuous_other_noise == 0);
    CHECK(ones > 0);
    if (!is_walker(base)) CHECK(zeros > 0);
    // The masked variants keep the flags exact as well (they are in both lander masks and in the walker's P).
    const std::string masked = base + "-P";
    const std::vector<int> kept = expected_kept(base, 'P');
    const Trajectory p = replay(masked, obs_noise(0.3, false), 8, actions);
    CHECK(mask_report(exempt, p, kept) == "");
  }
}

TEST_CASE("box2d pomdp: sigma zero gives exactly the full env", "[box2d][partial_observation]") {
  for (const std::string& base : kBases) {
    INFO(base);
    const Actions actions = record_actions(base, 9, Policy::random, 200);
    const Trajectory full = replay(base, {}, 9, actions);
    // Explicit zeros (with the binary exemption, which then exempts nothing from nothing).
    CHECK(same_trajectory(replay(base, obs_noise(0.0, false), 9, actions), full));
    // The wrapper itself with the F mask and σ = 0 around a directly built env.
    auto inner = make(base);
    const auto mask = expected_kept(base, 'F');
    rlm::envs::box2d::PartialObservation wrapped(std::move(inner), {.kept = mask, .binary = binary_indices(base)});
    CHECK(same_trajectory(replay(wrapped, 9, actions), full));
    CHECK(wrapped.observation_space() == make(base)->observation_space());
    // Noise 0 on a masked id is the plain slice (checked bitwise in the mask test); here with noise_on_binary false.
    CHECK(mask_report(full, replay(base + "-V", obs_noise(0.0, false), 9, actions), expected_kept(base, 'V')) == "");
  }
}

TEST_CASE("box2d pomdp: action noise perturbs continuous actions deterministically per seed",
          "[box2d][partial_observation]") {
  for (const std::string base : {"box2d/LunarLanderContinuous", "box2d/BipedalWalker", "box2d/BipedalWalkerHardcore"}) {
    INFO(base);
    for (uint64_t seed : {0ull, 13ull}) {
      INFO("seed " << seed);
      const Actions actions = record_actions(base, seed, Policy::heuristic, 300);
      const Trajectory clean = replay(base, {}, seed, actions);
      const Trajectory noisy = replay(base, action_noise(0.3), seed, actions);
      // The reset takes no action, so the env's own draws (terrain, initial push, dispersion) give the same obs.
      CHECK(same_obs(noisy.obs[0], clean.obs[0]));
      // Afterwards the trajectories part: the noisy actions moved the body differently.
      bool differs = noisy.obs.size() != clean.obs.size();
      for (size_t t = 1; t < std::min(noisy.obs.size(), clean.obs.size()); ++t)
        for (size_t i = 0; i < noisy.obs[t].size(); ++i)
          differs = differs || !same_bits(noisy.obs[t][i], clean.obs[t][i]);
      CHECK(differs);
      // Deterministic per seed: a fresh env and a reused env give the same trajectory.
      CHECK(same_trajectory(replay(base, action_noise(0.3), seed, actions), noisy));
      auto env = make(base, action_noise(0.3));
      (void)replay(*env, seed + 1, actions);
      CHECK(same_trajectory(replay(*env, seed, actions), noisy));
      // The masked ids with action noise see the same physics: their obs are the slice of the noisy F run.
      for (const char variant : {'P', 'V'}) {
        INFO(variant);
        CHECK(mask_report(noisy, replay(base + "-" + variant, action_noise(0.3), seed, actions),
                          expected_kept(base, variant)) == "");
      }
      // The action and observation noise streams are separate: adding observation noise does not change the
      // action noise, so the physics (rewards, ends) is the action-noise-only run's, and the observation noise is
      // the one this seed gives without action noise.
      EnvOptions both = action_noise(0.3);
      both.obs_noise_sigma = 0.2;
      const Trajectory mixed = replay(base, both, seed, actions);
      CHECK(result_report(noisy, mixed) == "");
      const auto d_mixed = differences(mixed, noisy);
      const Trajectory obs_only = replay(base, obs_noise(0.2), seed, actions);
      const auto d_obs = differences(obs_only, clean);
      double worst = 0;
      for (size_t i = 0; i < d_mixed.size(); ++i)
        for (size_t t = 0; t < std::min(d_mixed[i].size(), d_obs[i].size()); ++t)
          worst = std::max(worst, std::abs(d_mixed[i][t] - d_obs[i][t]));
      CHECK(worst < 1e-5);  // float rounding of x + noise only
    }
  }
  // The noise changes the rewards of the continuous lander (its step cost depends on the applied action).
  const Actions actions = record_actions("box2d/LunarLanderContinuous", 3, Policy::heuristic, 300);
  CHECK(result_report(replay("box2d/LunarLanderContinuous", {}, 3, actions),
                      replay("box2d/LunarLanderContinuous", action_noise(0.3), 3, actions)) != "");
}

TEST_CASE("box2d pomdp: action noise is N of 0 and sigma per component and is not clipped",
          "[box2d][partial_observation][statistical]") {
  auto recording = std::make_unique<RecordingEnv>();
  RecordingEnv* rec = recording.get();
  const double sigma = 0.5;
  rlm::envs::box2d::PartialObservation env(std::move(recording),
                                           {.kept = {0, 2}, .binary = {}, .action_noise_sigma = sigma});
  Obs obs(2);
  const std::array<float, 2> action = {0.9f, -0.2f};
  std::vector<std::vector<double>> d(2);
  const int steps = 5000;
  for (uint64_t seed : {1ull, 2ull}) {
    env.reset(seed, obs);
    CHECK(obs == Obs{0.25f, 0.25f});  // no observation noise asked for
    for (int t = 0; t < steps / 2; ++t) {
      env.step(action, obs);
      for (size_t k = 0; k < 2; ++k) d[k].push_back(double(rec->actions.back()[k]) - double(action[k]));
    }
  }
  const double n = static_cast<double>(d[0].size());
  bool beyond_bounds = false;
  for (const auto& a : rec->actions) beyond_bounds = beyond_bounds || std::abs(a[0]) > 1.0f || std::abs(a[1]) > 1.0f;
  CHECK(beyond_bounds);  // the env clips, not the wrapper (our choice: KF paper App. H does not say)
  for (size_t k = 0; k < 2; ++k) {
    INFO("component " << k << " mean " << mean(d[k]) << " std " << stddev(d[k]));
    CHECK(std::abs(mean(d[k])) < 5 * sigma / std::sqrt(n));
    CHECK(std::abs(stddev(d[k]) - sigma) < 5 * sigma / std::sqrt(2 * n));
  }
  CHECK(std::abs(correlation(d[0], d[1])) < 5 / std::sqrt(n));
  // Reseeding replays the same action noise.
  const auto first = std::vector<std::vector<float>>(rec->actions.begin(), rec->actions.begin() + 10);
  rec->actions.clear();
  env.reset(1, obs);
  for (int t = 0; t < 10; ++t) env.step(action, obs);
  CHECK(rec->actions == first);
}

TEST_CASE("box2d pomdp: invalid noise settings throw EnvError naming the id", "[box2d][partial_observation]") {
  // Action noise needs continuous actions: the discrete lander refuses it, in every variant.
  for (const std::string id : {"box2d/LunarLander", "box2d/LunarLander-P", "box2d/LunarLander-V"}) {
    const std::string gym = "box2d-" + id.substr(6) + "-v0";
    INFO(id);
    CHECK_THROWS_AS(make(id, action_noise(0.3)), rlm::EnvError);
    CHECK_THROWS_WITH(make(id, action_noise(0.3)), Catch::Contains(gym + ":") && Catch::Contains("continuous"));
    CHECK_NOTHROW(make(id, obs_noise(0.3)));
  }
  CHECK_NOTHROW(make("box2d/LunarLanderContinuous", action_noise(0.3)));
  CHECK_NOTHROW(make("box2d/BipedalWalkerHardcore-V", action_noise(0.3)));
  // Negative sigmas.
  CHECK_THROWS_WITH(make("box2d/BipedalWalker", obs_noise(-0.1)), Catch::Contains("box2d-BipedalWalker-v0"));
  CHECK_THROWS_WITH(make("box2d/LunarLanderContinuous-P", action_noise(-0.1)),
                    Catch::Contains("box2d-LunarLanderContinuous-P-v0"));
  // An index outside the full obs.
  const auto out_of_range = [] {
    rlm::envs::box2d::PartialObservation p(make("box2d/LunarLander"), {.kept = {0, 8}, .binary = {}});
  };
  CHECK_THROWS_WITH(out_of_range(), Catch::Contains("box2d-LunarLander-v0") && Catch::Contains("index 8"));
  // Gravity outside (−12, 0) is refused by the lander (the config layer refuses it before, see test_core).
  EnvOptions g;
  g.gravity = -12.0;
  CHECK_THROWS_AS(make("box2d/LunarLander-P", g), rlm::EnvError);
  g.gravity = 0.0;
  CHECK_THROWS_AS(make("box2d/LunarLanderContinuous", g), rlm::EnvError);
}

TEST_CASE("box2d pomdp: ids in gym spelling resolve to the canonical ids", "[box2d][partial_observation]") {
  CHECK(rlm::envs::canonical_env_id("box2d-LunarLander-P-v0") == "box2d/LunarLander-P");
  const auto ids = rlm::envs::registered_env_ids();
  for (const std::string& base : kBases) {
    for (const std::string suffix : {"", "-P", "-V"}) {
      const std::string id = base + suffix;
      INFO(id);
      CHECK(std::find(ids.begin(), ids.end(), id) != ids.end());
      CHECK(rlm::envs::canonical_env_id("box2d-" + id.substr(6) + "-v0") == id);
      CHECK(rlm::envs::canonical_env_id(id) == id);
      CHECK(rlm::envs::gym_style_id(id) == "box2d-" + id.substr(6) + "-v0");
    }
  }
  // make_env takes the gym spelling too, with the same obs.
  auto env = make("box2d-BipedalWalker-V-v0");
  CHECK(env->id() == "box2d/BipedalWalker-V");
  CHECK(env->observation_space().raw_size() == 7);
  // There are no -F ids (the full obs is the plain id) and no noisy ids (noise is an env option).
  CHECK_THROWS_AS(rlm::envs::canonical_env_id("box2d/LunarLander-F"), rlm::EnvError);
  CHECK_THROWS_AS(rlm::envs::canonical_env_id("box2d-LunarLander-P-N0.1-v0"), rlm::EnvError);
}

TEST_CASE("box2d pomdp: the trainer's default wrappers see the masked noisy obs", "[box2d][partial_observation]") {
  // With the default decorators (flatten on, previous action, antialias) the first 5 floats are the -P obs.
  rlm::envs::WrapperOptions w;
  w.previous_action = true;
  w.antialias = true;
  w.flatten = true;
  auto wrapped = rlm::envs::make_env("box2d/LunarLanderContinuous-P", w, obs_noise(0.3));
  auto bare = make("box2d/LunarLanderContinuous-P", obs_noise(0.3));
  CHECK(wrapped->observation_space().raw_size() == 5 + 2 + 2);  // obs, previous action Box(2), is_t0 one-hot
  Obs a(9), b(5);
  wrapped->reset(6, a);
  bare->reset(6, b);
  for (size_t k = 0; k < 5; ++k) CHECK(same_bits(a[k], b[k]));
  const std::array<float, 2> action = {0.5f, -0.5f};
  wrapped->step(action, a);
  bare->step(action, b);
  for (size_t k = 0; k < 5; ++k) CHECK(same_bits(a[k], b[k]));
}
