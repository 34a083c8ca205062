// How a PPO iteration's whole-episode sequences are cut into SGD minibatches, exactly as RLlib 2.3 does it for the
// POPGym, FFM and SHM runs (old API stack; ray-project/ray@ray-2.3.0: rllib/execution/train_ops.py's
// multi_gpu_train_one_step and rllib/policy/sample_batch.py's SampleBatch._slice).
//
// RLlib counts *real* steps, not padded ones: the batch holds sum(seq_lens) steps and is cut into
// max(1, floor(sum / minibatch_size)) minibatches. Minibatch i is the step range [i·mb, (i+1)·mb), which the slice map
// of the unpadded sequence lengths widens or narrows to whole sequences: from the sequence holding real step i·mb up
// to, not including, the one holding real step (i+1)·mb. Each sequence lands in at most one minibatch, and the steps
// after the last full minibatch are not trained on. When minibatch_size >= sum there is one minibatch: the whole batch.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

namespace rlm::agents {

/// Sequences [begin, end) of the batch, in batch order.
struct SequenceRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool empty() const { return begin == end; }
  bool operator==(const SequenceRange&) const = default;
};

/// RLlib's minibatches for sequences of the given real lengths. A range is empty when one sequence is longer than
/// minibatch_size and covers both of its ends (RLlib would then run an empty minibatch; the trainer skips it).
std::vector<SequenceRange> rllib_minibatches(std::span<const int64_t> seq_lens, int64_t minibatch_size);

}  // namespace rlm::agents
