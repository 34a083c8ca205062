// Episode replay (see episode_replay.hpp for the layout, the sampling distribution and how it relates to
// pomdp-baselines' seq_vanilla / seq_efficient buffers).
#include "agents/episode_replay.hpp"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace rlm::agents {

namespace {

constexpr char kMagic[8] = {'R', 'L', 'M', 'E', 'P', 'R', 'E', 'P'};
constexpr uint32_t kVersion = 2;  // 2 added per-step terminal flags; 1 is still read

std::string describe(float value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

template <class T>
void append(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

template <class T>
void append_array(std::string& out, const std::vector<T>& values) {
  out.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

/// Reads a snapshot front to back; every read is bounds-checked and names what it was reading.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("EpisodeReplay::from_bytes: " + why + " (at byte " + std::to_string(pos_) + " of " +
                             std::to_string(bytes_.size()) + ")");
  }
  void read(void* dst, size_t n, const char* what) {
    if (n > bytes_.size() - pos_) fail(std::string("snapshot truncated while reading ") + what);
    std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
  }
  template <class T>
  T get(const char* what) {
    T value;
    read(&value, sizeof(T), what);
    return value;
  }
  template <class T>
  void get_array(std::vector<T>& dst, int64_t count, const char* what) {
    // count is bounded by the snapshot's transition total (<= capacity) times a row size: check before allocating.
    const auto n = static_cast<uint64_t>(count);
    if (n > (bytes_.size() - pos_) / sizeof(T)) fail(std::string("snapshot truncated while reading ") + what);
    dst.resize(n);
    read(dst.data(), n * sizeof(T), what);
  }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace

struct EpisodeReplay::BatchPointers {
  float* obs;
  float* actions;
  float* prev_actions;
  float* prev_rewards;
  float* rewards;
  float* terminated;
  float* mask;
  bool* starts;
};

EpisodeReplay::EpisodeReplay(const EpisodeReplayOptions& options) : options_(options) {
  if (options.capacity < 1)
    throw std::invalid_argument("EpisodeReplay: capacity must be >= 1 transition, got " +
                                std::to_string(options.capacity));
  if (options.obs_size < 1)
    throw std::invalid_argument("EpisodeReplay: obs_size must be >= 1, got " + std::to_string(options.obs_size));
  if (options.action_size < 1)
    throw std::invalid_argument("EpisodeReplay: action_size must be >= 1, got " + std::to_string(options.action_size));
}

void EpisodeReplay::add_episode(std::span<const float> obs, std::span<const float> actions,
                                std::span<const float> rewards, bool terminated,
                                std::span<const uint8_t> step_terminals) {
  const auto length = static_cast<int64_t>(rewards.size());
  if (length < 1) throw std::invalid_argument("EpisodeReplay::add_episode: an episode needs at least one step");
  if (length > options_.capacity)
    throw std::invalid_argument("EpisodeReplay::add_episode: an episode of " + std::to_string(length) +
                                " steps is longer than the buffer's capacity of " + std::to_string(options_.capacity) +
                                " transitions");
  const auto obs_count = static_cast<size_t>((length + 1) * options_.obs_size);
  const auto action_count = static_cast<size_t>(length * options_.action_size);
  if (obs.size() != obs_count)
    throw std::invalid_argument("EpisodeReplay::add_episode: " + std::to_string(length) + " steps need " +
                                std::to_string(obs_count) + " observation floats ((L+1)*obs_size), got " +
                                std::to_string(obs.size()));
  if (actions.size() != action_count)
    throw std::invalid_argument("EpisodeReplay::add_episode: " + std::to_string(length) + " steps need " +
                                std::to_string(action_count) + " action floats (L*action_size), got " +
                                std::to_string(actions.size()));
  if (!step_terminals.empty() && step_terminals.size() != rewards.size())
    throw std::invalid_argument("EpisodeReplay::add_episode: " + std::to_string(length) +
                                " steps need as many step terminal flags, got " +
                                std::to_string(step_terminals.size()));
  for (const uint8_t flag : step_terminals)
    if (flag > 1)
      throw std::invalid_argument("EpisodeReplay::add_episode: a step terminal flag must be 0 or 1, got " +
                                  std::to_string(flag));

  Episode episode;
  episode.length = length;
  episode.terminated = terminated;
  // Only an episode with some terminal step before its end needs the per-step flags.
  if (std::ranges::find(step_terminals, uint8_t{1}) != step_terminals.end())
    episode.step_terminals.assign(step_terminals.begin(), step_terminals.end());
  if (options_.byte_observations) {
    episode.obs_bytes.resize(obs_count);
    for (size_t i = 0; i < obs_count; ++i) {
      const float v = obs[i];
      if (!(v >= 0.0f && v <= 255.0f && v == std::floor(v))) {
        const auto row = static_cast<int64_t>(i) / options_.obs_size;
        throw std::invalid_argument("EpisodeReplay::add_episode: observation value " + describe(v) + " (step " +
                                    std::to_string(row) + ", component " +
                                    std::to_string(static_cast<int64_t>(i) - row * options_.obs_size) +
                                    ") is not an integer in [0, 255], which byte_observations requires");
      }
      episode.obs_bytes[i] = static_cast<uint8_t>(v);
    }
  } else {
    episode.obs.assign(obs.begin(), obs.end());
  }
  episode.actions.assign(actions.begin(), actions.end());
  episode.rewards.assign(rewards.begin(), rewards.end());
  push_episode(std::move(episode));
}

void EpisodeReplay::push_episode(Episode episode) {
  const int64_t length = episode.length;
  while (num_transitions_ + length > options_.capacity) evict_front();
  episodes_.push_back(std::move(episode));
  num_transitions_ += length;
  while (!longest_.empty() && longest_.back() < length) longest_.pop_back();
  longest_.push_back(length);
  if (counts_.seq_len > 0) {
    const int64_t before = counts_.prefix.empty() ? counts_.base : counts_.prefix.back();
    counts_.prefix.push_back(before + std::max<int64_t>(1, length - counts_.seq_len + 1));
  }
}

void EpisodeReplay::evict_front() {
  const Episode& oldest = episodes_.front();
  if (longest_.front() == oldest.length) longest_.pop_front();
  if (counts_.seq_len > 0) {
    counts_.base = counts_.prefix.front();
    counts_.prefix.pop_front();
  }
  num_transitions_ -= oldest.length;
  episodes_.pop_front();
}

void EpisodeReplay::rebuild_start_counts(int64_t seq_len) const {
  counts_.seq_len = seq_len;
  counts_.base = 0;
  counts_.prefix.clear();
  int64_t sum = 0;
  for (const Episode& e : episodes_) {
    sum += std::max<int64_t>(1, e.length - seq_len + 1);
    counts_.prefix.push_back(sum);
  }
}

ReplayBatch EpisodeReplay::sample(int64_t batch_size, int64_t seq_len, int64_t burn_in, double baseline,
                                  std::mt19937_64& rng) const {
  if (batch_size < 1)
    throw std::invalid_argument("EpisodeReplay::sample: batch_size must be >= 1, got " + std::to_string(batch_size));
  if (burn_in < 0)
    throw std::invalid_argument("EpisodeReplay::sample: burn_in must be >= 0, got " + std::to_string(burn_in));
  if (!std::isfinite(baseline) || baseline < 0.0)
    throw std::invalid_argument("EpisodeReplay::sample: the sample weight baseline must be finite and >= 0, got " +
                                std::to_string(baseline));
  if (episodes_.empty()) throw std::logic_error("EpisodeReplay::sample: the buffer holds no episode");

  const int64_t num_episodes = this->num_episodes();
  const int64_t longest = longest_episode();
  const int64_t T = seq_len > 0 ? seq_len : longest;
  // When no stored episode is longer than the window every episode has exactly one start: no table needed.
  const bool one_start_each = T >= longest;
  if (!one_start_each && counts_.seq_len != T) rebuild_start_counts(T);
  // Σ_{j<=i} n_j
  const auto starts_through = [&](int64_t i) -> int64_t {
    return one_start_each ? i + 1 : counts_.prefix[static_cast<size_t>(i)] - counts_.base;
  };
  const double total =
      baseline * static_cast<double>(num_episodes) + static_cast<double>(starts_through(num_episodes - 1));

  std::uniform_real_distribution<double> unit(0.0, 1.0);
  picks_.resize(static_cast<size_t>(batch_size));
  for (auto& pick : picks_) {
    const double u = unit(rng) * total;
    // The first episode whose cumulative weight baseline·(i+1) + Σ_{j<=i} n_j exceeds u.
    int64_t lo = 0, hi = num_episodes - 1;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (baseline * static_cast<double>(mid + 1) + static_cast<double>(starts_through(mid)) > u)
        hi = mid;
      else
        lo = mid + 1;
    }
    const int64_t n = std::max<int64_t>(1, episodes_[static_cast<size_t>(lo)].length - T + 1);
    const int64_t start = n > 1 ? std::uniform_int_distribution<int64_t>(0, n - 1)(rng) : 0;
    pick = {lo, start};
  }

  const int64_t R = burn_in + T;
  // The previous call's tensors are filled again when the caller has let go of all of them (no tensor or view of
  // theirs shares the memory), which saves the allocation and, for large batches, the page faults of fresh memory.
  ReplayBatch& spare = spare_;
  const auto fits = [](const torch::Tensor& t, std::initializer_list<int64_t> sizes) {
    return t.defined() && t.use_count() == 1 && t.storage().use_count() == 1 && !t.requires_grad() &&
           t.is_contiguous() && t.sizes() == torch::IntArrayRef(sizes);
  };
  const int64_t B = batch_size, os = options_.obs_size, as = options_.action_size;
  const bool reuse = fits(spare.obs, {R + 1, B, os}) && fits(spare.actions, {R, B, as}) &&
                     fits(spare.prev_actions, {R + 1, B, as}) && fits(spare.prev_rewards, {R + 1, B}) &&
                     fits(spare.rewards, {R, B}) && fits(spare.terminated, {R, B}) && fits(spare.mask, {R, B}) &&
                     fits(spare.starts, {R + 1, B});
  if (!reuse) {
    const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
    spare.obs = torch::empty({R + 1, B, os}, f32);
    spare.actions = torch::empty({R, B, as}, f32);
    spare.prev_actions = torch::empty({R + 1, B, as}, f32);
    spare.prev_rewards = torch::empty({R + 1, B}, f32);
    spare.rewards = torch::empty({R, B}, f32);
    spare.terminated = torch::empty({R, B}, f32);
    spare.mask = torch::empty({R, B}, f32);
    spare.starts = torch::empty({R + 1, B}, torch::TensorOptions().dtype(torch::kBool));
  }
  spare.burn_in = burn_in;
  spare.seq_len = T;
  ReplayBatch batch = spare;  // shares the tensors
  const BatchPointers out{batch.obs.data_ptr<float>(),          batch.actions.data_ptr<float>(),
                          batch.prev_actions.data_ptr<float>(), batch.prev_rewards.data_ptr<float>(),
                          batch.rewards.data_ptr<float>(),      batch.terminated.data_ptr<float>(),
                          batch.mask.data_ptr<float>(),         batch.starts.data_ptr<bool>()};

  // Every element is written by exactly one column, so the result does not depend on how columns are split.
  const int64_t column_work = (R + 1) * (options_.obs_size + 2 * options_.action_size + 6);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / column_work);
  at::parallel_for(0, batch_size, grain, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const auto [episode, start] = picks_[static_cast<size_t>(b)];
      fill_column(episodes_[static_cast<size_t>(episode)], start, b, batch_size, T, burn_in, out);
    }
  });
  return batch;
}

void EpisodeReplay::fill_column(const Episode& ep, int64_t start, int64_t column, int64_t batch_size, int64_t seq_len,
                                int64_t burn_in, const BatchPointers& out) const {
  const int64_t R = burn_in + seq_len;
  const int64_t offset = start - burn_in;                         // step k sits on row k - offset
  const int64_t first = std::max<int64_t>(0, offset);             // first step in the column
  const int64_t last = std::min(start + seq_len, ep.length) - 1;  // last step in the column (>= start)
  const int64_t row_first = first - offset, row_last = last - offset;
  const int64_t os = options_.obs_size, as = options_.action_size;
  const auto at = [&](int64_t row) { return row * batch_size + column; };

  // Observations: o_first .. o_{last+1} on rows row_first .. row_last + 1.
  for (int64_t r = 0; r <= R; ++r) {
    float* dst = out.obs + at(r) * os;
    if (r < row_first || r > row_last + 1) {
      std::memset(dst, 0, static_cast<size_t>(os) * sizeof(float));
    } else if (options_.byte_observations) {
      const uint8_t* src = ep.obs_bytes.data() + (r + offset) * os;
      for (int64_t j = 0; j < os; ++j) dst[j] = static_cast<float>(src[j]);
    } else {
      std::memcpy(dst, ep.obs.data() + (r + offset) * os, static_cast<size_t>(os) * sizeof(float));
    }
  }
  // Per-step rows: a_k, r_k, the termination flag and the loss mask.
  for (int64_t r = 0; r < R; ++r) {
    const bool real = r >= row_first && r <= row_last;
    const int64_t k = r + offset;
    float* dst = out.actions + at(r) * as;
    if (real)
      std::memcpy(dst, ep.actions.data() + k * as, static_cast<size_t>(as) * sizeof(float));
    else
      std::memset(dst, 0, static_cast<size_t>(as) * sizeof(float));
    out.rewards[at(r)] = real ? ep.rewards[static_cast<size_t>(k)] : 0.0f;
    const bool terminal = real && ((ep.terminated && k == ep.length - 1) ||
                                   (!ep.step_terminals.empty() && ep.step_terminals[static_cast<size_t>(k)] != 0));
    out.terminated[at(r)] = terminal ? 1.0f : 0.0f;
    out.mask[at(r)] = real && r >= burn_in ? 1.0f : 0.0f;
  }
  // The agent's previous action and reward: a_{k-1}, r_{k-1} after the column's first row, 0 on it (the reset row).
  for (int64_t r = 0; r <= R; ++r) {
    const bool has = r > row_first && r <= row_last + 1;
    const int64_t k = r + offset;
    float* dst = out.prev_actions + at(r) * as;
    if (has)
      std::memcpy(dst, ep.actions.data() + (k - 1) * as, static_cast<size_t>(as) * sizeof(float));
    else
      std::memset(dst, 0, static_cast<size_t>(as) * sizeof(float));
    out.prev_rewards[at(r)] = has ? ep.rewards[static_cast<size_t>(k - 1)] : 0.0f;
    out.starts[at(r)] = r == row_first;
  }
}

std::string EpisodeReplay::to_bytes() const {
  const size_t obs_elem = options_.byte_observations ? sizeof(uint8_t) : sizeof(float);
  size_t size = sizeof(kMagic) + sizeof(uint32_t) + 5 * sizeof(int64_t) + sizeof(uint8_t);
  for (const Episode& e : episodes_)
    size += sizeof(int64_t) + 2 * sizeof(uint8_t) + e.step_terminals.size() +
            static_cast<size_t>((e.length + 1) * options_.obs_size) * obs_elem +
            static_cast<size_t>(e.length * (options_.action_size + 1)) * sizeof(float);
  std::string out;
  out.reserve(size);
  out.append(kMagic, sizeof(kMagic));
  append(out, kVersion);
  append(out, options_.obs_size);
  append(out, options_.action_size);
  append(out, static_cast<uint8_t>(options_.byte_observations ? 1 : 0));
  append(out, options_.capacity);
  append(out, num_episodes());
  append(out, num_transitions_);
  for (const Episode& e : episodes_) {
    append(out, e.length);
    append(out, static_cast<uint8_t>(e.terminated ? 1 : 0));
    append(out, static_cast<uint8_t>(e.step_terminals.empty() ? 0 : 1));
    append_array(out, e.step_terminals);
    if (options_.byte_observations)
      append_array(out, e.obs_bytes);
    else
      append_array(out, e.obs);
    append_array(out, e.actions);
    append_array(out, e.rewards);
  }
  return out;
}

void EpisodeReplay::from_bytes(std::string_view bytes) {
  Reader in(bytes);
  char magic[sizeof(kMagic)];
  in.read(magic, sizeof(magic), "the magic");
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) in.fail("not an EpisodeReplay snapshot (bad magic)");
  const auto version = in.get<uint32_t>("the version");
  if (version != kVersion && version != 1)
    in.fail("unsupported snapshot version " + std::to_string(version) + " (this build reads versions 1 to " +
            std::to_string(kVersion) + ")");
  const auto obs_size = in.get<int64_t>("obs_size");
  const auto action_size = in.get<int64_t>("action_size");
  const auto byte_obs = in.get<uint8_t>("the observation layout");
  in.get<int64_t>("the capacity");  // the snapshot's own capacity: informative only, this buffer's applies
  const auto num_episodes = in.get<int64_t>("the episode count");
  const auto num_transitions = in.get<int64_t>("the transition count");
  if (obs_size != options_.obs_size)
    in.fail("the snapshot has obs_size " + std::to_string(obs_size) + ", this buffer " +
            std::to_string(options_.obs_size));
  if (action_size != options_.action_size)
    in.fail("the snapshot has action_size " + std::to_string(action_size) + ", this buffer " +
            std::to_string(options_.action_size));
  if (byte_obs > 1) in.fail("bad observation layout flag " + std::to_string(byte_obs));
  if ((byte_obs == 1) != options_.byte_observations)
    in.fail(std::string("the snapshot stores observations as ") + (byte_obs ? "bytes" : "floats") +
            ", this buffer as " + (options_.byte_observations ? "bytes" : "floats"));
  if (num_transitions < 0 || num_episodes < 0 || num_episodes > num_transitions)
    in.fail("bad counts: " + std::to_string(num_episodes) + " episodes, " + std::to_string(num_transitions) +
            " transitions");
  if (num_transitions > options_.capacity)
    in.fail("the snapshot holds " + std::to_string(num_transitions) +
            " transitions, more than this buffer's capacity of " + std::to_string(options_.capacity));

  EpisodeReplay fresh(options_);
  int64_t remaining = num_transitions;
  for (int64_t i = 0; i < num_episodes; ++i) {
    Episode e;
    e.length = in.get<int64_t>("an episode length");
    if (e.length < 1 || e.length > remaining)
      in.fail("episode " + std::to_string(i) + " has length " + std::to_string(e.length) + " (" +
              std::to_string(remaining) + " transitions left of the stated total)");
    remaining -= e.length;
    const auto terminated = in.get<uint8_t>("an episode's termination flag");
    if (terminated > 1) in.fail("bad termination flag " + std::to_string(terminated));
    e.terminated = terminated == 1;
    if (version >= 2) {  // version 1 had no per-step terminal flags
      const auto has_step_terminals = in.get<uint8_t>("an episode's step-terminal layout");
      if (has_step_terminals > 1) in.fail("bad step-terminal layout flag " + std::to_string(has_step_terminals));
      if (has_step_terminals == 1) {
        in.get_array(e.step_terminals, e.length, "step terminal flags");
        for (const uint8_t flag : e.step_terminals)
          if (flag > 1) in.fail("bad step terminal flag " + std::to_string(flag));
      }
    }
    if (options_.byte_observations)
      in.get_array(e.obs_bytes, (e.length + 1) * obs_size, "observations");
    else
      in.get_array(e.obs, (e.length + 1) * obs_size, "observations");
    in.get_array(e.actions, e.length * action_size, "actions");
    in.get_array(e.rewards, e.length, "rewards");
    fresh.push_episode(std::move(e));
  }
  if (remaining != 0)
    in.fail("the episodes hold " + std::to_string(num_transitions - remaining) + " transitions, the header says " +
            std::to_string(num_transitions));
  if (!in.at_end()) in.fail("trailing bytes after the last episode");
  *this = std::move(fresh);
}

}  // namespace rlm::agents
