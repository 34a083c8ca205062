// Episode replay for the recurrent off-policy trainers (agents/episode_replay.hpp): the layout of a sampled batch
// (checked literally on hand-built episodes and, for every column, against a per-element reference written from the
// header's definitions), burn-in, FIFO eviction, byte observations, the sampling distribution (chi-square against
// pomdp-baselines' start weights) and the snapshot round trip.
//
// Every stored value encodes where it came from, so a column's episode and start can be read back from the batch:
// o_k[j] = 1000·id + 10·k + j + 1, a_k[j] = −(1000·id + 10·k + j + 1), r_k = 1000·id + k + 0.5.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "agents/episode_replay.hpp"

using rlm::agents::EpisodeReplay;
using rlm::agents::EpisodeReplayOptions;
using rlm::agents::ReplayBatch;

namespace {

constexpr int64_t kObs = 3, kAct = 2;

struct Episode {
  int64_t id = 0, length = 0;
  bool terminated = false;
  std::vector<float> obs, actions, rewards;
  std::vector<uint8_t> step_terminals;  ///< empty, or one flag per step (meta-RL goal states)
};

float obs_value(int64_t id, int64_t k, int64_t j) { return static_cast<float>(1000 * id + 10 * k + j + 1); }
float action_value(int64_t id, int64_t k, int64_t j) { return -obs_value(id, k, j); }
float reward_value(int64_t id, int64_t k) { return static_cast<float>(1000 * id + k) + 0.5f; }

Episode make_episode(int64_t id, int64_t length, bool terminated, int64_t obs_size = kObs, int64_t action_size = kAct) {
  Episode e{id, length, terminated, {}, {}, {}, {}};
  for (int64_t k = 0; k <= length; ++k)
    for (int64_t j = 0; j < obs_size; ++j) e.obs.push_back(obs_value(id, k, j));
  for (int64_t k = 0; k < length; ++k) {
    for (int64_t j = 0; j < action_size; ++j) e.actions.push_back(action_value(id, k, j));
    e.rewards.push_back(reward_value(id, k));
  }
  return e;
}

void add(EpisodeReplay& buffer, const Episode& e) {
  buffer.add_episode(e.obs, e.actions, e.rewards, e.terminated, e.step_terminals);
}

/// Marks every third step (k % 3 == 1) terminal, as goal states would be.
Episode with_step_terminals(Episode e) {
  e.step_terminals.assign(static_cast<size_t>(e.length), 0);
  for (int64_t k = 1; k < e.length; k += 3) e.step_terminals[static_cast<size_t>(k)] = 1;
  return e;
}

EpisodeReplayOptions options(int64_t capacity = 1000, int64_t obs_size = kObs, int64_t action_size = kAct) {
  EpisodeReplayOptions o;
  o.capacity = capacity;
  o.obs_size = obs_size;
  o.action_size = action_size;
  return o;
}

/// (episode id, start) of column b, read from the window's first row (row burn_in always holds step `start`).
std::pair<int64_t, int64_t> decode(const ReplayBatch& batch, int64_t b) {
  const auto v = static_cast<int64_t>(batch.obs[batch.burn_in][b][0].item<float>());
  const int64_t id = v / 1000;
  return {id, (v - 1000 * id - 1) / 10};
}

/// The batch every column's (episode, start) implies, element by element from the header's definitions.
ReplayBatch reference(const ReplayBatch& batch, const std::map<int64_t, Episode>& episodes) {
  const int64_t K = batch.burn_in, T = batch.seq_len, R = K + T, B = batch.obs.size(1);
  const int64_t os = batch.obs.size(2), as = batch.actions.size(2);
  ReplayBatch ref;
  ref.obs = torch::zeros({R + 1, B, os});
  ref.actions = torch::zeros({R, B, as});
  ref.prev_actions = torch::zeros({R + 1, B, as});
  ref.prev_rewards = torch::zeros({R + 1, B});
  ref.rewards = torch::zeros({R, B});
  ref.terminated = torch::zeros({R, B});
  ref.mask = torch::zeros({R, B});
  ref.starts = torch::zeros({R + 1, B}, torch::kBool);
  auto obs = ref.obs.accessor<float, 3>();
  auto act = ref.actions.accessor<float, 3>();
  auto prev_act = ref.prev_actions.accessor<float, 3>();
  auto prev_rew = ref.prev_rewards.accessor<float, 2>();
  auto rew = ref.rewards.accessor<float, 2>();
  auto term = ref.terminated.accessor<float, 2>();
  auto mask = ref.mask.accessor<float, 2>();
  auto starts = ref.starts.accessor<bool, 2>();
  for (int64_t b = 0; b < B; ++b) {
    const auto [id, s] = decode(batch, b);
    const Episode& e = episodes.at(id);
    const int64_t L = e.length, first = std::max<int64_t>(0, s - K), stop = std::min(s + T, L);
    for (int64_t r = 0; r <= R; ++r) {
      const int64_t k = s - K + r;  // the step on row r
      if (k >= first && k <= stop)
        for (int64_t j = 0; j < os; ++j) obs[r][b][j] = obs_value(id, k, j);
      if (k > first && k <= stop) {
        for (int64_t j = 0; j < as; ++j) prev_act[r][b][j] = action_value(id, k - 1, j);
        prev_rew[r][b] = reward_value(id, k - 1);
      }
      starts[r][b] = k == first;
      if (r == R) continue;
      const bool real = k >= first && k < stop;
      if (!real) continue;
      for (int64_t j = 0; j < as; ++j) act[r][b][j] = action_value(id, k, j);
      rew[r][b] = reward_value(id, k);
      const bool step_terminal = !e.step_terminals.empty() && e.step_terminals[static_cast<size_t>(k)] != 0;
      term[r][b] = (e.terminated && k == L - 1) || step_terminal ? 1.0f : 0.0f;
      mask[r][b] = k >= s ? 1.0f : 0.0f;
    }
  }
  return ref;
}

void check_against_reference(const ReplayBatch& batch, const std::map<int64_t, Episode>& episodes) {
  const ReplayBatch ref = reference(batch, episodes);
  CHECK(torch::equal(batch.obs, ref.obs));
  CHECK(torch::equal(batch.actions, ref.actions));
  CHECK(torch::equal(batch.prev_actions, ref.prev_actions));
  CHECK(torch::equal(batch.prev_rewards, ref.prev_rewards));
  CHECK(torch::equal(batch.rewards, ref.rewards));
  CHECK(torch::equal(batch.terminated, ref.terminated));
  CHECK(torch::equal(batch.mask, ref.mask));
  CHECK(torch::equal(batch.starts, ref.starts));
}

void check_shapes(const ReplayBatch& batch, int64_t B, int64_t seq_len, int64_t burn_in) {
  const int64_t R = burn_in + seq_len;
  CHECK(batch.seq_len == seq_len);
  CHECK(batch.burn_in == burn_in);
  CHECK(batch.obs.sizes() == torch::IntArrayRef{R + 1, B, kObs});
  CHECK(batch.actions.sizes() == torch::IntArrayRef{R, B, kAct});
  CHECK(batch.prev_actions.sizes() == torch::IntArrayRef{R + 1, B, kAct});
  CHECK(batch.prev_rewards.sizes() == torch::IntArrayRef{R + 1, B});
  CHECK(batch.rewards.sizes() == torch::IntArrayRef{R, B});
  CHECK(batch.terminated.sizes() == torch::IntArrayRef{R, B});
  CHECK(batch.mask.sizes() == torch::IntArrayRef{R, B});
  CHECK(batch.starts.sizes() == torch::IntArrayRef{R + 1, B});
  CHECK(batch.obs.dtype() == torch::kFloat32);
  CHECK(batch.starts.dtype() == torch::kBool);
}

torch::Tensor rows(std::vector<std::vector<float>> values) {
  std::vector<float> flat;
  for (const auto& row : values) flat.insert(flat.end(), row.begin(), row.end());
  return torch::tensor(flat).reshape({static_cast<int64_t>(values.size()), -1});
}
torch::Tensor row(std::vector<float> values) { return torch::tensor(values); }

/// The first column whose window is episode `id` from `start`, or -1.
int64_t find_column(const ReplayBatch& batch, int64_t id, int64_t start) {
  for (int64_t b = 0; b < batch.obs.size(1); ++b)
    if (decode(batch, b) == std::pair<int64_t, int64_t>{id, start}) return b;
  return -1;
}

bool batches_equal(const ReplayBatch& a, const ReplayBatch& b) {
  return a.seq_len == b.seq_len && a.burn_in == b.burn_in && torch::equal(a.obs, b.obs) &&
         torch::equal(a.actions, b.actions) && torch::equal(a.prev_actions, b.prev_actions) &&
         torch::equal(a.prev_rewards, b.prev_rewards) && torch::equal(a.rewards, b.rewards) &&
         torch::equal(a.terminated, b.terminated) && torch::equal(a.mask, b.mask) && torch::equal(a.starts, b.starts);
}

}  // namespace

TEST_CASE("a whole short episode: every field of the window, padding and next obs", "[agents][episode_replay]") {
  const bool terminated = GENERATE(true, false);
  EpisodeReplay buffer(options());
  add(buffer, make_episode(1, 3, terminated));
  std::mt19937_64 rng(1);
  const ReplayBatch batch = buffer.sample(3, 5, 0, 0.0, rng);
  check_shapes(batch, 3, 5, 0);
  for (int64_t b = 0; b < 3; ++b) {
    INFO("column " << b << (terminated ? ", terminated" : ", truncated"));
    CHECK(torch::equal(batch.obs.select(1, b), rows({{1001, 1002, 1003},
                                                     {1011, 1012, 1013},
                                                     {1021, 1022, 1023},
                                                     {1031, 1032, 1033},  // o_3, the final obs, after the last step
                                                     {0, 0, 0},
                                                     {0, 0, 0}})));
    CHECK(torch::equal(batch.actions.select(1, b),
                       rows({{-1001, -1002}, {-1011, -1012}, {-1021, -1022}, {0, 0}, {0, 0}})));
    CHECK(torch::equal(batch.prev_actions.select(1, b),
                       rows({{0, 0}, {-1001, -1002}, {-1011, -1012}, {-1021, -1022}, {0, 0}, {0, 0}})));
    CHECK(torch::equal(batch.rewards.select(1, b), row({1000.5f, 1001.5f, 1002.5f, 0, 0})));
    CHECK(torch::equal(batch.prev_rewards.select(1, b), row({0, 1000.5f, 1001.5f, 1002.5f, 0, 0})));
    CHECK(torch::equal(batch.terminated.select(1, b), terminated ? row({0, 0, 1, 0, 0}) : row({0, 0, 0, 0, 0})));
    CHECK(torch::equal(batch.mask.select(1, b), row({1, 1, 1, 0, 0})));
    CHECK(torch::equal(batch.starts.select(1, b).to(torch::kFloat32), row({1, 0, 0, 0, 0, 0})));
  }
}

TEST_CASE("windows inside longer episodes, every column against the reference", "[agents][episode_replay]") {
  std::map<int64_t, Episode> episodes{
      {1, make_episode(1, 3, true)}, {2, make_episode(2, 5, false)}, {3, make_episode(3, 7, true)}};
  EpisodeReplay buffer(options());
  for (const auto& [id, e] : episodes) add(buffer, e);
  CHECK(buffer.num_episodes() == 3);
  CHECK(buffer.num_transitions() == 15);
  CHECK(buffer.longest_episode() == 7);
  std::mt19937_64 rng(2);
  const ReplayBatch batch = buffer.sample(200, 4, 0, 0.0, rng);
  check_shapes(batch, 200, 4, 0);
  check_against_reference(batch, episodes);

  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t b = 0; b < 200; ++b) seen.insert(decode(batch, b));
  // Valid starts: max(1, L - 4 + 1) -> 1, 2, 4.
  CHECK(seen == std::set<std::pair<int64_t, int64_t>>{{1, 0}, {2, 0}, {2, 1}, {3, 0}, {3, 1}, {3, 2}, {3, 3}});

  SECTION("a window that ends on a terminated episode's last step") {
    const int64_t b = find_column(batch, 3, 3);
    REQUIRE(b >= 0);
    CHECK(torch::equal(batch.obs.select(1, b).select(1, 0), row({3031, 3041, 3051, 3061, 3071})));  // o_3 .. o_7
    CHECK(torch::equal(batch.prev_actions.select(1, b).select(1, 0), row({0, -3031, -3041, -3051, -3061})));
    CHECK(torch::equal(batch.prev_rewards.select(1, b), row({0, 3003.5f, 3004.5f, 3005.5f, 3006.5f})));
    CHECK(torch::equal(batch.terminated.select(1, b), row({0, 0, 0, 1})));
    CHECK(torch::equal(batch.mask.select(1, b), row({1, 1, 1, 1})));
  }
  SECTION("a window that stops before the episode's end: no termination, the next obs is o_{s+T}") {
    const int64_t b = find_column(batch, 3, 1);
    REQUIRE(b >= 0);
    CHECK(torch::equal(batch.obs.select(1, b).select(1, 0), row({3011, 3021, 3031, 3041, 3051})));
    CHECK(torch::equal(batch.terminated.select(1, b), row({0, 0, 0, 0})));
    CHECK(torch::equal(batch.starts.select(1, b).to(torch::kFloat32), row({1, 0, 0, 0, 0})));
  }
  SECTION("a truncated episode's last step is not terminal") {
    const int64_t b = find_column(batch, 2, 1);
    REQUIRE(b >= 0);
    CHECK(torch::equal(batch.rewards.select(1, b), row({2001.5f, 2002.5f, 2003.5f, 2004.5f})));
    CHECK(torch::equal(batch.terminated.select(1, b), row({0, 0, 0, 0})));
  }
  SECTION("seq_len <= 0 is the longest stored episode: one start per episode") {
    for (const int64_t seq_len : {int64_t{0}, int64_t{-1}}) {
      const ReplayBatch whole = buffer.sample(100, seq_len, 0, 0.0, rng);
      check_shapes(whole, 100, 7, 0);
      check_against_reference(whole, episodes);
      std::set<std::pair<int64_t, int64_t>> whole_seen;
      for (int64_t b = 0; b < 100; ++b) whole_seen.insert(decode(whole, b));
      CHECK(whole_seen == std::set<std::pair<int64_t, int64_t>>{{1, 0}, {2, 0}, {3, 0}});
    }
  }
}

TEST_CASE("burn-in rows precede the window, left-padded where the episode is too young", "[agents][episode_replay]") {
  std::map<int64_t, Episode> episodes{{4, make_episode(4, 10, true)}, {5, make_episode(5, 2, false)}};
  EpisodeReplay buffer(options());
  for (const auto& [id, e] : episodes) add(buffer, e);
  std::mt19937_64 rng(3);
  const ReplayBatch batch = buffer.sample(300, 3, 4, 0.0, rng);  // R = 7 rows
  check_shapes(batch, 300, 3, 4);
  check_against_reference(batch, episodes);
  std::set<int64_t> starts_seen;
  for (int64_t b = 0; b < 300; ++b)
    if (decode(batch, b).first == 4) starts_seen.insert(decode(batch, b).second);
  CHECK(starts_seen == std::set<int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(find_column(batch, 5, 0) >= 0);

  SECTION("start 0: four rows of left padding, the memory resets on the window's first row") {
    const int64_t b = find_column(batch, 4, 0);
    REQUIRE(b >= 0);
    CHECK(torch::equal(batch.obs.select(1, b).select(1, 0), row({0, 0, 0, 0, 4001, 4011, 4021, 4031})));
    CHECK(torch::equal(batch.starts.select(1, b).to(torch::kFloat32), row({0, 0, 0, 0, 1, 0, 0, 0})));
    CHECK(torch::equal(batch.prev_rewards.select(1, b), row({0, 0, 0, 0, 0, 4000.5f, 4001.5f, 4002.5f})));
    CHECK(torch::equal(batch.mask.select(1, b), row({0, 0, 0, 0, 1, 1, 1})));
  }
  SECTION("start 2: two steps of burn-in after two rows of padding") {
    const int64_t b = find_column(batch, 4, 2);
    REQUIRE(b >= 0);
    CHECK(torch::equal(batch.obs.select(1, b).select(1, 0), row({0, 0, 4001, 4011, 4021, 4031, 4041, 4051})));
    CHECK(torch::equal(batch.starts.select(1, b).to(torch::kFloat32), row({0, 0, 1, 0, 0, 0, 0, 0})));
    CHECK(torch::equal(batch.rewards.select(1, b), row({0, 0, 4000.5f, 4001.5f, 4002.5f, 4003.5f, 4004.5f})));
    CHECK(torch::equal(batch.mask.select(1, b), row({0, 0, 0, 0, 1, 1, 1})));
  }
  SECTION("start 7: a full burn-in, the window ends on the terminal step with o_10 after it") {
    const int64_t b = find_column(batch, 4, 7);
    REQUIRE(b >= 0);
    CHECK(torch::equal(batch.obs.select(1, b).select(1, 0), row({4031, 4041, 4051, 4061, 4071, 4081, 4091, 4101})));
    CHECK(torch::equal(batch.starts.select(1, b).to(torch::kFloat32), row({1, 0, 0, 0, 0, 0, 0, 0})));
    // 0 on the reset row, then a_{k-1}: the window's first row sees the burn-in's last action.
    CHECK(torch::equal(batch.prev_actions.select(1, b).select(1, 1),
                       row({0, -4032, -4042, -4052, -4062, -4072, -4082, -4092})));
    CHECK(torch::equal(batch.mask.select(1, b), row({0, 0, 0, 0, 1, 1, 1})));
    CHECK(torch::equal(batch.terminated.select(1, b), row({0, 0, 0, 0, 0, 0, 1})));
  }
  SECTION("an episode shorter than the window: padding on both sides") {
    const int64_t b = find_column(batch, 5, 0);
    REQUIRE(b >= 0);
    CHECK(torch::equal(batch.obs.select(1, b).select(1, 0), row({0, 0, 0, 0, 5001, 5011, 5021, 0})));
    CHECK(torch::equal(batch.mask.select(1, b), row({0, 0, 0, 0, 1, 1, 0})));
    CHECK(torch::equal(batch.terminated.select(1, b), row({0, 0, 0, 0, 0, 0, 0})));
  }
}

TEST_CASE("a batch the caller still holds is never overwritten, a released one is refilled",
          "[agents][episode_replay]") {
  std::map<int64_t, Episode> episodes{{1, make_episode(1, 6, true)}, {2, make_episode(2, 9, false)}};
  EpisodeReplay buffer(options());
  for (const auto& [id, e] : episodes) add(buffer, e);
  std::mt19937_64 rng(8);
  const ReplayBatch kept = buffer.sample(16, 4, 2, 0.0, rng);
  const torch::Tensor kept_obs = kept.obs.clone(), kept_starts = kept.starts.clone();
  const void* released = nullptr;
  {
    const ReplayBatch second = buffer.sample(16, 4, 2, 0.0, rng);  // `kept` is held: fresh tensors
    CHECK(second.obs.data_ptr() != kept.obs.data_ptr());
    check_against_reference(second, episodes);
    released = second.obs.data_ptr();
  }
  torch::Tensor view, view_copy;
  {
    const ReplayBatch third = buffer.sample(16, 4, 2, 0.0, rng);  // `second` was released: its memory is refilled
    CHECK(third.obs.data_ptr() == released);
    check_against_reference(third, episodes);
    view = third.rewards.narrow(0, 1, 2);  // a view alone keeps the memory from being reused
    view_copy = view.clone();
  }
  const ReplayBatch fourth = buffer.sample(16, 4, 2, 0.0, rng);
  CHECK(fourth.obs.data_ptr() != released);
  check_against_reference(fourth, episodes);
  CHECK(torch::equal(view, view_copy));
  CHECK(torch::equal(kept.obs, kept_obs));
  CHECK(torch::equal(kept.starts, kept_starts));
  check_against_reference(kept, episodes);
}

TEST_CASE("whole oldest episodes are evicted when a new one does not fit", "[agents][episode_replay]") {
  EpisodeReplay buffer(options(10));
  std::mt19937_64 rng(4);
  const auto ids = [&] {
    std::set<int64_t> out;
    const ReplayBatch batch = buffer.sample(200, -1, 0, 0.0, rng);
    for (int64_t b = 0; b < 200; ++b) out.insert(decode(batch, b).first);
    return out;
  };
  add(buffer, make_episode(1, 4, true));
  add(buffer, make_episode(2, 3, true));
  add(buffer, make_episode(3, 2, false));
  CHECK(buffer.num_transitions() == 9);
  CHECK(buffer.longest_episode() == 4);
  add(buffer, make_episode(4, 1, true));  // 10: fits exactly
  CHECK(buffer.num_episodes() == 4);
  CHECK(ids() == std::set<int64_t>{1, 2, 3, 4});
  add(buffer, make_episode(5, 3, true));  // 13 > 10: episode 1 goes (4 steps) -> 9
  CHECK(buffer.num_transitions() == 9);
  CHECK(buffer.num_episodes() == 4);
  CHECK(buffer.longest_episode() == 3);
  CHECK(ids() == std::set<int64_t>{2, 3, 4, 5});
  add(buffer, make_episode(6, 2, false));  // 11: one over, so episode 2 goes (3 steps) -> 8
  CHECK(buffer.num_transitions() == 8);
  CHECK(ids() == std::set<int64_t>{3, 4, 5, 6});
  add(buffer, make_episode(7, 6, false));  // 14: episodes 3, 4 and 5 go -> 8
  CHECK(buffer.num_transitions() == 8);
  CHECK(ids() == std::set<int64_t>{6, 7});
  CHECK(buffer.longest_episode() == 6);
  add(buffer, make_episode(8, 10, true));  // everything else goes
  CHECK(buffer.num_episodes() == 1);
  CHECK(buffer.num_transitions() == 10);
  CHECK(buffer.longest_episode() == 10);
  CHECK(ids() == std::set<int64_t>{8});

  SECTION("an episode longer than the capacity throws and changes nothing") {
    const Episode big = make_episode(9, 11, true);
    CHECK_THROWS_AS(add(buffer, big), std::invalid_argument);
    CHECK(buffer.num_episodes() == 1);
    CHECK(ids() == std::set<int64_t>{8});
  }
  SECTION("inconsistent sizes throw") {
    Episode e = make_episode(9, 2, true);
    e.obs.pop_back();
    CHECK_THROWS_AS(add(buffer, e), std::invalid_argument);
    e = make_episode(9, 2, true);
    e.actions.push_back(0);
    CHECK_THROWS_AS(add(buffer, e), std::invalid_argument);
    CHECK_THROWS_AS(buffer.add_episode(std::vector<float>(kObs), {}, {}, true), std::invalid_argument);
    CHECK(buffer.num_transitions() == 10);
  }
}

TEST_CASE("byte observations round-trip exactly and reject values a byte cannot hold", "[agents][episode_replay]") {
  EpisodeReplayOptions o = options(100, 2, 1);
  o.byte_observations = true;
  EpisodeReplay buffer(o);
  std::vector<float> obs;
  for (int v = 0; v < 8; ++v) obs.push_back(static_cast<float>(v * 255 / 7));  // 0 .. 255, 4 steps of 2
  add(buffer, {0, 3, true, obs, {1, 2, 3}, {0.5f, 0.25f, 1}, {}});
  std::mt19937_64 rng(5);
  const ReplayBatch batch = buffer.sample(2, 3, 0, 0.0, rng);
  CHECK(batch.obs.dtype() == torch::kFloat32);
  CHECK(torch::equal(batch.obs.select(1, 1), torch::tensor(obs).reshape({4, 2})));
  CHECK(torch::equal(batch.actions.select(1, 0).flatten(), row({1, 2, 3})));

  for (const float bad : {3.5f, 256.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> with_bad = obs;
    with_bad[5] = bad;
    std::ostringstream value;
    value << bad;
    INFO("value " << value.str());
    const auto add_bad = [&] {
      buffer.add_episode(with_bad, std::vector<float>{1, 2, 3}, std::vector<float>{0, 0, 0}, true);
    };
    CHECK_THROWS_AS(add_bad(), std::invalid_argument);
    CHECK_THROWS_WITH(add_bad(), Catch::Contains("value " + value.str()));
  }
  CHECK(buffer.num_episodes() == 1);
}

namespace {

/// Pearson's statistic of `counts` against probabilities `p`.
double chi_square(const std::vector<double>& counts, const std::vector<double>& p) {
  double total = 0, stat = 0;
  for (double c : counts) total += c;
  for (size_t i = 0; i < p.size(); ++i)
    stat += (counts[i] - total * p[i]) * (counts[i] - total * p[i]) / (total * p[i]);
  return stat;
}

/// The chi-square quantile at 1 - 1e-6 (z = 4.753), Wilson and Hilferty's cube-root approximation.
double chi_square_critical(size_t df) {
  const double k = static_cast<double>(df), h = 2.0 / (9.0 * k);
  return k * std::pow(1.0 - h + 4.753 * std::sqrt(h), 3);
}

/// Cell probabilities of (episode, start) when episode e is drawn ∝ (baseline + n_e) and its start uniformly.
std::vector<double> cell_probabilities(const std::vector<int64_t>& n, double baseline) {
  double total = 0;
  for (int64_t ne : n) total += baseline + static_cast<double>(ne);
  std::vector<double> p;
  for (int64_t ne : n)
    for (int64_t s = 0; s < ne; ++s)
      p.push_back((baseline + static_cast<double>(ne)) / total / static_cast<double>(ne));
  return p;
}

std::vector<double> scaled(const std::vector<double>& p, double n) {
  std::vector<double> out;
  for (double x : p) out.push_back(x * n);
  return out;
}

}  // namespace

TEST_CASE("episodes are drawn in proportion to baseline + valid starts, starts uniformly", "[agents][episode_replay]") {
  const std::vector<int64_t> lengths = {1, 3, 5, 8, 12, 20};
  EpisodeReplay buffer(options(1000, 1, 1));
  for (size_t i = 0; i < lengths.size(); ++i)
    add(buffer, make_episode(static_cast<int64_t>(i), lengths[i], true, 1, 1));
  constexpr int64_t kWindows = 24000, kBatch = 240;

  const auto counts = [&](int64_t seq_len, double baseline, const std::vector<int64_t>& n, uint64_t seed) {
    std::vector<int64_t> offset;  // first cell of each episode
    int64_t cells = 0;
    for (int64_t ne : n) {
      offset.push_back(cells);
      cells += ne;
    }
    std::vector<double> out(static_cast<size_t>(cells), 0.0);
    std::mt19937_64 rng(seed);
    for (int64_t done = 0; done < kWindows; done += kBatch) {
      const ReplayBatch batch = buffer.sample(kBatch, seq_len, 0, baseline, rng);
      const auto first = batch.obs.accessor<float, 3>();
      for (int64_t b = 0; b < kBatch; ++b) {
        const auto v = static_cast<int64_t>(first[0][b][0]);
        const int64_t id = v / 1000, s = (v - 1000 * id - 1) / 10;
        REQUIRE(s < n[static_cast<size_t>(id)]);
        out[static_cast<size_t>(offset[static_cast<size_t>(id)] + s)] += 1;
      }
    }
    return out;
  };
  const auto check = [&](const std::vector<double>& observed, const std::vector<double>& p,
                         const std::vector<std::vector<double>>& wrong) {
    const double critical = chi_square_critical(p.size() - 1);
    INFO("chi-square " << chi_square(observed, p) << " with " << p.size() - 1 << " df, critical value " << critical);
    CHECK(chi_square(observed, p) < critical);
    // The test's power: the expected counts of each wrong sampler are far beyond the critical value.
    for (const auto& q : wrong) CHECK(chi_square(scaled(q, kWindows), p) > 5 * critical);
  };

  // seq_len 6: n_e = max(1, L - 5) = 1, 1, 1, 3, 7, 15 (28 starts).
  const std::vector<int64_t> n = {1, 1, 1, 3, 7, 15};
  std::vector<double> uniform_over_episodes;
  for (int64_t ne : n)
    for (int64_t s = 0; s < ne; ++s) uniform_over_episodes.push_back(1.0 / 6.0 / static_cast<double>(ne));
  SECTION("baseline 0: every valid start equally likely") {
    check(counts(6, 0.0, n, 11), cell_probabilities(n, 0.0), {uniform_over_episodes});
  }
  SECTION("baseline 3: short episodes are drawn more often") {
    check(counts(6, 3.0, n, 12), cell_probabilities(n, 3.0), {cell_probabilities(n, 0.0), uniform_over_episodes});
  }
  SECTION("seq_len -1: one start per episode, uniform over episodes whatever the baseline") {
    const std::vector<int64_t> ones(6, 1);
    check(counts(-1, 2.0, ones, 13), cell_probabilities(ones, 0.0), {});
  }
}

TEST_CASE("snapshots restore the buffer exactly", "[agents][episode_replay]") {
  const bool bytes_layout = GENERATE(false, true);
  EpisodeReplayOptions o = options(60);
  o.byte_observations = bytes_layout;
  EpisodeReplay buffer(o);
  // Byte observations hold integers up to 255: episode ids stay 0 and steps small enough.
  const auto episode = [&](int64_t i, int64_t length) {
    Episode e = make_episode(bytes_layout ? 0 : i, length, i % 3 != 0);
    if (i % 4 == 1) e = with_step_terminals(e);
    if (bytes_layout)
      for (float& v : e.obs) v = std::fmod(v + static_cast<float>(7 * i), 256.0f);
    return e;
  };
  for (int64_t i = 0; i < 10; ++i) add(buffer, episode(i, 3 + (i * 5) % 10));
  std::mt19937_64 warm(9);
  (void)buffer.sample(4, 4, 0, 0.0, warm);                                      // builds the start table for T = 4 ...
  for (int64_t i = 10; i < 15; ++i) add(buffer, episode(i, 2 + (i * 7) % 11));  // ... then updated with evictions
  REQUIRE(buffer.num_transitions() <= 60);

  const std::string bytes = buffer.to_bytes();
  EpisodeReplay restored(o);
  add(restored, episode(99, 5));  // replaced by the snapshot
  restored.from_bytes(bytes);
  CHECK(restored.num_episodes() == buffer.num_episodes());
  CHECK(restored.num_transitions() == buffer.num_transitions());
  CHECK(restored.longest_episode() == buffer.longest_episode());
  CHECK(restored.to_bytes() == bytes);
  for (const auto& [seq_len, burn_in, baseline] :
       {std::tuple{int64_t{4}, int64_t{0}, 0.0}, std::tuple{int64_t{-1}, int64_t{0}, 0.0},
        std::tuple{int64_t{2}, int64_t{3}, 1.5}, std::tuple{int64_t{4}, int64_t{2}, 4.0}}) {
    std::mt19937_64 rng_a(21), rng_b(21);
    INFO("seq_len " << seq_len << ", burn_in " << burn_in << ", baseline " << baseline);
    CHECK(batches_equal(buffer.sample(64, seq_len, burn_in, baseline, rng_a),
                        restored.sample(64, seq_len, burn_in, baseline, rng_b)));
    CHECK(rng_a() == rng_b());
  }

  SECTION("a larger capacity is fine; one too small for the contents is refused") {
    EpisodeReplayOptions larger = o;
    larger.capacity = 1000;
    EpisodeReplay big(larger);
    big.from_bytes(bytes);
    CHECK(big.num_transitions() == buffer.num_transitions());
    EpisodeReplayOptions smaller = o;
    smaller.capacity = buffer.num_transitions() - 1;
    EpisodeReplay small(smaller);
    CHECK_THROWS_AS(small.from_bytes(bytes), std::runtime_error);
  }
  SECTION("malformed snapshots throw and leave the buffer as it was") {
    EpisodeReplay target(o);
    add(target, episode(1, 4));
    const std::string before = target.to_bytes();
    // Every truncation, a trailing byte, and no bytes at all.
    for (size_t n = 0; n < bytes.size(); ++n)
      CHECK_THROWS_AS(target.from_bytes(bytes.substr(0, n)), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(bytes + '\0'), std::runtime_error);
    // Header fields: magic 0..7, version 8, obs_size 12, action_size 20, layout 28, capacity 29, episodes 37,
    // transitions 45, then the first episode's length at 53, its termination flag at 61 and whether step terminal
    // flags follow at 62.
    const auto patched = [&](size_t at, auto value) {
      std::string b = bytes;
      std::memcpy(b.data() + at, &value, sizeof(value));
      return b;
    };
    CHECK_THROWS_WITH(target.from_bytes(patched(0, 'X')), Catch::Contains("magic"));
    CHECK_THROWS_WITH(target.from_bytes(patched(8, uint32_t{3})), Catch::Contains("version 3"));
    CHECK_THROWS_WITH(target.from_bytes(patched(8, uint32_t{0})), Catch::Contains("version 0"));
    CHECK_THROWS_WITH(target.from_bytes(patched(12, int64_t{4})), Catch::Contains("obs_size 4"));
    CHECK_THROWS_WITH(target.from_bytes(patched(20, int64_t{1})), Catch::Contains("action_size 1"));
    CHECK_THROWS_AS(target.from_bytes(patched(28, static_cast<uint8_t>(bytes_layout ? 0 : 1))), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(patched(37, int64_t{-1})), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(patched(37, buffer.num_episodes() + 1)), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(patched(45, int64_t{1} << 50)), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(patched(53, int64_t{1} << 40)), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(patched(53, int64_t{0})), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(patched(61, uint8_t{7})), std::runtime_error);
    CHECK_THROWS_AS(target.from_bytes(patched(62, uint8_t{7})), std::runtime_error);
    EpisodeReplayOptions other = o;
    other.byte_observations = !bytes_layout;
    CHECK_THROWS_WITH(EpisodeReplay(other).from_bytes(bytes), Catch::Contains("stores observations as"));
    CHECK(target.to_bytes() == before);
  }
}

TEST_CASE("step terminal flags mark steps terminal inside an episode", "[agents][episode_replay]") {
  EpisodeReplay buffer(options());
  std::map<int64_t, Episode> episodes;
  for (int64_t id = 1; id <= 6; ++id) {
    Episode e = make_episode(id, 4 + id, id % 2 == 0);
    if (id % 3 != 0) e = with_step_terminals(e);
    add(buffer, e);
    episodes[id] = e;
  }
  std::mt19937_64 rng(3);
  for (const auto& [seq_len, burn_in] : {std::pair{int64_t{0}, int64_t{0}}, std::pair{int64_t{3}, int64_t{2}}}) {
    const ReplayBatch batch = buffer.sample(64, seq_len, burn_in, 0.0, rng);
    check_against_reference(batch, episodes);
    CHECK(batch.terminated.sum().item<float>() > 0);
  }
  // A whole-episode window of one episode, literally: steps 1 and 4 of 5 (and not the truncated end).
  EpisodeReplay single(options());
  add(single, with_step_terminals(make_episode(1, 5, false)));
  const ReplayBatch batch = single.sample(1, 0, 0, 0.0, rng);
  CHECK(torch::equal(batch.terminated.flatten(), torch::tensor({0.0f, 1.0f, 0.0f, 0.0f, 1.0f})));
  // Sizes and values are checked.
  Episode bad = make_episode(2, 5, false);
  bad.step_terminals = {0, 1};
  CHECK_THROWS_WITH(add(single, bad), Catch::Contains("step terminal flags"));
  bad.step_terminals = {0, 0, 2, 0, 0};
  CHECK_THROWS_WITH(add(single, bad), Catch::Contains("0 or 1"));
  CHECK(single.num_episodes() == 1);
}

TEST_CASE("version-1 snapshots (before step terminal flags) are still read", "[agents][episode_replay]") {
  EpisodeReplay buffer(options());
  add(buffer, make_episode(1, 4, true));
  add(buffer, make_episode(2, 6, false));
  const std::string v2 = buffer.to_bytes();
  // Version 1 is version 2 without each episode's step-terminal layout byte (after its termination flag).
  std::string v1 = v2;
  const uint32_t one = 1;
  std::memcpy(v1.data() + 8, &one, sizeof(one));
  const auto episode_bytes = [](int64_t length) {
    return static_cast<size_t>(8 + 1 + 1 + (length + 1) * kObs * 4 + length * (kAct + 1) * 4);
  };
  const size_t first = 53, second = first + episode_bytes(4);
  v1.erase(second + 9, 1);  // the later one first, so the earlier offset stays valid
  v1.erase(first + 9, 1);
  REQUIRE(v1.size() == v2.size() - 2);
  EpisodeReplay restored(options());
  restored.from_bytes(v1);
  CHECK(restored.to_bytes() == v2);
}

TEST_CASE("bad arguments are refused", "[agents][episode_replay]") {
  CHECK_THROWS_AS(EpisodeReplay(options(0)), std::invalid_argument);
  CHECK_THROWS_AS(EpisodeReplay(options(10, 0, 1)), std::invalid_argument);
  CHECK_THROWS_AS(EpisodeReplay(options(10, 1, 0)), std::invalid_argument);
  EpisodeReplay buffer(options());
  std::mt19937_64 rng(6);
  CHECK_THROWS_AS(buffer.sample(4, 4, 0, 0.0, rng), std::logic_error);
  add(buffer, make_episode(1, 5, true));
  CHECK_THROWS_AS(buffer.sample(0, 4, 0, 0.0, rng), std::invalid_argument);
  CHECK_THROWS_AS(buffer.sample(4, 4, -1, 0.0, rng), std::invalid_argument);
  CHECK_THROWS_AS(buffer.sample(4, 4, 0, -1.0, rng), std::invalid_argument);
  CHECK_THROWS_AS(buffer.sample(4, 4, 0, std::nan(""), rng), std::invalid_argument);
  CHECK_NOTHROW(buffer.sample(4, 4, 0, 0.0, rng));
}

// Not a pass/fail test: sample() timings for the trainer's typical shapes. Run with
//   ./build/test_agents "[episode_replay_bench]"
TEST_CASE("episode replay sample timings", "[.][episode_replay_bench]") {
  struct Case {
    int64_t batch, seq_len, obs_size, action_size, capacity, min_len, max_len, reps;
  };
  for (const Case& c : {Case{32, 64, 8, 1, 1'000'000, 20, 500, 2000}, Case{64, 1000, 8, 1, 1'000'000, 500, 1500, 50},
                        Case{64, 1000, 300, 1, 100'000, 500, 1500, 10}, Case{256, 64, 300, 1, 100'000, 20, 500, 200}}) {
    EpisodeReplay buffer(options(c.capacity, c.obs_size, c.action_size));
    std::mt19937_64 lengths(1);
    int64_t id = 0;
    while (buffer.num_transitions() + c.max_len <= c.capacity) {
      const int64_t L = std::uniform_int_distribution<int64_t>(c.min_len, c.max_len)(lengths);
      add(buffer, make_episode(id % 1000, L, id % 2 == 0, c.obs_size, c.action_size));
      ++id;
    }
    std::mt19937_64 rng(2);
    (void)buffer.sample(c.batch, c.seq_len, 0, 0.0, rng);
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < c.reps; ++i) (void)buffer.sample(c.batch, c.seq_len, 0, 0.0, rng);
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / c.reps;
    std::cout << "sample B=" << c.batch << " seq_len=" << c.seq_len << " obs_size=" << c.obs_size
              << " action_size=" << c.action_size << " (" << buffer.num_episodes() << " episodes, torch threads "
              << torch::get_num_threads() << "): " << us << " us\n";
  }
}
