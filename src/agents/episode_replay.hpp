// Episode replay for the recurrent off-policy trainers (SAC, SAC-D, TD3): whole episodes in, padded time-major
// windows out (twni2016/pomdp-baselines@28cb5dd:buffers/seq_replay_buffer_{vanilla,efficient}.py).
//
// Layout. The buffer is a FIFO deque of episodes; each episode keeps its own contiguous arrays: o_0..o_L
// ((L+1)·obs_size floats, or bytes with byte_observations), a_0..a_{L-1} (L·action_size floats, raw env layout) and
// r_0..r_{L-1}, plus its length, whether it terminated, and per-step terminal flags where some step before the end
// is terminal (meta-RL goal states). `capacity` counts transitions (sum of L); adding an
// episode that does not fit evicts whole episodes from the front. The final observation is stored once per episode,
// so an episode costs L transitions of capacity plus one extra observation row (like seq_efficient's padding slot,
// which it counts as a transition, while seq_vanilla stores every observation twice, as obs and obs2).
//
// Sampling. With T = seq_len, episode e of length L has n_e = max(1, L − T + 1) valid starts. Episode e is drawn
// with probability (baseline + n_e) / Σ_j (baseline + n_j) and then its start uniformly: exactly pomdp-baselines'
// `np.random.choice(valid_idx, p ∝ (baseline + n_e) / n_e)` over every valid start of seq_vanilla / seq_efficient.
// There, a window is always T consecutive slots of the circular arrays and may run past its episode's end into the
// next episode (or the write head); those steps get mask 0. Here the window stops at the episode's end and the rest
// is zero padding with mask 0 instead. The masked steps never reach a loss (policies/models/policy_rnn.py there
// multiplies every term by the mask and divides by Σ mask), and the memories are causal, so the outputs and losses
// on the real steps are the same.
// The row after a window's last real step is the episode's own final observation o_L in both: seq_vanilla holds it
// as that step's obs2, seq_efficient in the padding slot it writes after each episode.
//
// Rows. A column (one window) with start s, burn_in K and T real rows is laid out on R = K + T rows: row r holds
// step k = s − K + r. Rows with k < 0 are left padding, rows K..K+T−1 are the window (mask 1 where k < L), and rows
// with k ≥ L are right padding. obs has one row more (R + 1): obs[r + 1] is the observation after row r's action,
// so obs[0..R] = [o_first, obs2 of each row] as policy_rnn.py builds `observs`. prev_actions / prev_rewards are the
// agent's (a_{k−1}, r_{k−1}) inputs: prev_actions[r + 1] = actions[r], and 0 at each column's first real row, which
// is where `starts` is true and the memory resets — an episode's first step, a window's first row without burn-in
// (the pomdp-baselines convention: h = 0, a = r = 0 when a window starts mid-episode), or the first burn-in row. A
// window therefore always starts exactly as an episode starts while acting.
//
// Sampling draws only from the caller's std::mt19937_64: per column one std::uniform_real_distribution<double> draw
// for the episode (binary search on cumulative weights), then, when n_e > 1, one std::uniform_int_distribution draw
// for the start. Columns are then filled in parallel (at::parallel_for); the result does not depend on the thread
// count. The returned tensors are the previous call's again when the caller no longer holds any of them (or any view
// of them), so a training loop that drops each batch before the next draw allocates nothing; a batch the caller
// keeps is never written to. `sample` also keeps a cache of the cumulative start counts for the last seq_len it saw,
// updated incrementally by add_episode, so a draw is O(log episodes): it is const for the caller but not safe to call
// from several threads on the same buffer at once.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlm::agents {

struct EpisodeReplayOptions {
  int64_t capacity = 1'000'000;  ///< transitions; whole oldest episodes are evicted FIFO when a new one does not fit
  int64_t obs_size = 0;          ///< floats per observation
  int64_t action_size = 0;       ///< floats per stored action (raw env layout: one float per Discrete index, Box dims)
  /// Store observations as uint8 (every value must be an integer in [0, 255]; add_episode checks it and throws
  /// std::invalid_argument naming the value otherwise). Sampled observations are still float32.
  bool byte_observations = false;
};

/// One sampled batch, time-major, CPU float32 tensors unless noted. R = burn_in + seq_len rows.
struct ReplayBatch {
  torch::Tensor obs;           ///< [R+1, B, obs_size]: o_t for each row, and row R+1 the next obs after the last row
  torch::Tensor actions;       ///< [R, B, action_size]: a_t taken at row t
  torch::Tensor prev_actions;  ///< [R+1, B, action_size]: prev_actions[t+1] = actions[t]; 0 where `starts`
  torch::Tensor prev_rewards;  ///< [R+1, B]: likewise for rewards
  torch::Tensor rewards;       ///< [R, B]
  torch::Tensor terminated;    ///< [R, B]: 1 at the last step of an episode that terminated (not truncated) and
                               ///< at steps add_episode marked terminal, else 0
  torch::Tensor mask;          ///< [R, B]: 1 on the seq_len window's real steps, 0 on burn-in rows and padding
  torch::Tensor starts;        ///< [R+1, B] bool: true at each column's first real row (the memory resets before it)
  int64_t burn_in = 0, seq_len = 0;
};

class EpisodeReplay {
 public:
  /// Throws std::invalid_argument unless capacity >= 1, obs_size >= 1 and action_size >= 1.
  explicit EpisodeReplay(const EpisodeReplayOptions& options);

  /// obs: (L+1)*obs_size floats (o_0..o_L, o_L the final obs the episode ended on), actions: L*action_size,
  /// rewards: L. L >= 1. `terminated`: the episode ended by termination (true) or by truncation/time-out (false).
  /// `step_terminals`: empty, or L flags (0/1) that mark further steps terminal for the TD target while the episode
  /// goes on (pomdp-baselines' meta-RL replay: is_goal_state() on every step); a sampled step's `terminated` is its
  /// flag, or 1 on the last step of a terminated episode. Throws std::invalid_argument (leaving the buffer
  /// unchanged) on inconsistent sizes, an episode longer than capacity, or an observation byte_observations cannot
  /// store.
  void add_episode(std::span<const float> obs, std::span<const float> actions, std::span<const float> rewards,
                   bool terminated, std::span<const uint8_t> step_terminals = {});

  int64_t num_transitions() const { return num_transitions_; }
  int64_t num_episodes() const { return static_cast<int64_t>(episodes_.size()); }
  /// The longest stored episode (0 when empty): the window length seq_len <= 0 stands for.
  int64_t longest_episode() const { return longest_.empty() ? 0 : longest_.front(); }
  const EpisodeReplayOptions& options() const { return options_; }

  /// B windows; see the file comment. seq_len <= 0 means "the longest stored episode" (pomdp-baselines
  /// sampled_seq_len = -1). Episode e of length L has n_e = max(1, L - seq_len + 1) valid starts; it is drawn with
  /// probability proportional to (baseline + n_e), then its start s uniformly from [0, n_e). The window holds steps
  /// s .. min(s+seq_len, L)-1, padded (mask 0, zeros) to seq_len; windows never run into another episode. With
  /// burn_in > 0 the window is preceded by up to burn_in earlier steps of the same episode (mask 0); when fewer exist
  /// the column is left-padded and `starts` marks the episode's first row. Sampling is with replacement and uses only
  /// `rng`. Throws std::logic_error when the buffer is empty, std::invalid_argument on batch_size < 1, burn_in < 0 or
  /// a negative or non-finite baseline.
  ReplayBatch sample(int64_t batch_size, int64_t seq_len, int64_t burn_in, double baseline, std::mt19937_64& rng) const;

  /// Exact, versioned binary snapshot (for checkpoints; little-endian host layout) and its inverse. from_bytes
  /// replaces the contents and throws std::runtime_error, leaving the buffer unchanged, on a malformed or truncated
  /// snapshot, one whose obs_size/action_size/byte layout differs from this buffer's options, or one holding more
  /// transitions than this buffer's capacity (a different capacity is otherwise fine).
  std::string to_bytes() const;
  void from_bytes(std::string_view bytes);

 private:
  struct Episode {
    int64_t length = 0;
    bool terminated = false;
    std::vector<float> obs;               ///< (length+1)*obs_size, unless byte_observations
    std::vector<uint8_t> obs_bytes;       ///< (length+1)*obs_size, when byte_observations
    std::vector<float> actions;           ///< length*action_size
    std::vector<float> rewards;           ///< length
    std::vector<uint8_t> step_terminals;  ///< length flags, or empty when no step before the end is terminal
  };

  /// Cumulative valid-start counts for one seq_len: prefix[i] - base = Σ_{j<=i} n_j over the stored episodes.
  struct StartCounts {
    int64_t seq_len = 0;  ///< 0: not built
    int64_t base = 0;     ///< the prefix value of the evicted episodes (so eviction is a pop_front)
    std::deque<int64_t> prefix;
  };

  struct BatchPointers;  ///< raw pointers into a ReplayBatch's tensors (episode_replay.cpp)

  void push_episode(Episode episode);
  void evict_front();
  void rebuild_start_counts(int64_t seq_len) const;
  void fill_column(const Episode& ep, int64_t start, int64_t column, int64_t batch_size, int64_t seq_len,
                   int64_t burn_in, const BatchPointers& out) const;

  EpisodeReplayOptions options_;
  std::deque<Episode> episodes_;
  int64_t num_transitions_ = 0;
  std::deque<int64_t> longest_;  ///< non-increasing lengths: the sliding maximum over the FIFO (front = longest)
  mutable StartCounts counts_;
  mutable std::vector<std::pair<int64_t, int64_t>> picks_;  ///< (episode, start) per column, reused across calls
  /// The last batch's tensors: sample() refills them when the caller holds none of them any more.
  mutable ReplayBatch spare_;
};

}  // namespace rlm::agents
