#include "agents/minibatches.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace rlm::agents {

std::vector<SequenceRange> rllib_minibatches(std::span<const int64_t> seq_lens, int64_t minibatch_size) {
  if (minibatch_size < 1) throw std::invalid_argument("rllib_minibatches: minibatch_size must be >= 1");
  const auto num_sequences = static_cast<int64_t>(seq_lens.size());
  // starts[j] = real steps before sequence j; starts[S] = the total.
  std::vector<int64_t> starts(seq_lens.size() + 1, 0);
  std::partial_sum(seq_lens.begin(), seq_lens.end(), starts.begin() + 1);
  const int64_t total = starts.back();
  // learn_on_loaded_batch: a minibatch at least as large as the batch is the whole batch.
  if (minibatch_size >= total) return {{0, num_sequences}};

  // SampleBatch._slice's slice map: real step k -> the sequence holding it (S for k == total).
  auto sequence_of = [&](int64_t step) {
    if (step >= total) return num_sequences;
    // The last sequence starting at or before `step`; empty sequences share a start and are skipped past.
    return static_cast<int64_t>(std::upper_bound(starts.begin(), starts.end() - 1, step) - starts.begin()) - 1;
  };
  const int64_t count = std::max<int64_t>(1, total / minibatch_size);
  std::vector<SequenceRange> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    out.push_back({sequence_of(i * minibatch_size), sequence_of(std::min(total, (i + 1) * minibatch_size))});
  }
  return out;
}

}  // namespace rlm::agents
