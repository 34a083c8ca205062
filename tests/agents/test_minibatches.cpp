// PPO minibatches as RLlib 2.3 cuts them (agents/minibatches.hpp): real steps, whole sequences, the tail dropped.
// The expected ranges are worked out by hand from SampleBatch._slice's slice map and multi_gpu_train_one_step's
// num_batches = max(1, real_steps // sgd_minibatch_size).
#include <catch2/catch.hpp>
#include <ostream>
#include <vector>

#include "agents/minibatches.hpp"

namespace rlm::agents {
// For Catch's messages.
std::ostream& operator<<(std::ostream& out, const SequenceRange& r) {
  return out << '[' << r.begin << ", " << r.end << ')';
}
}  // namespace rlm::agents

using rlm::agents::rllib_minibatches;
using rlm::agents::SequenceRange;

namespace {

int64_t real_steps(const std::vector<int64_t>& lens, const SequenceRange& r) {
  int64_t n = 0;
  for (int64_t j = r.begin; j < r.end; ++j) n += lens[static_cast<size_t>(j)];
  return n;
}

std::vector<int64_t> step_counts(const std::vector<int64_t>& lens, const std::vector<SequenceRange>& ranges) {
  std::vector<int64_t> out;
  for (const auto& r : ranges) out.push_back(real_steps(lens, r));
  return out;
}

}  // namespace

TEST_CASE("mixed episode lengths give RLlib's minibatch count and real-step counts", "[agents][minibatches]") {
  const std::vector<int64_t> lens = {10, 20, 5, 30, 15, 20};  // 100 real steps; the longest is 30
  SECTION("minibatch 25: floor(100 / 25) = 4 minibatches") {
    const auto mbs = rllib_minibatches(lens, 25);
    CHECK(mbs == std::vector<SequenceRange>{{0, 1}, {1, 3}, {3, 4}, {4, 6}});
    CHECK(step_counts(lens, mbs) == std::vector<int64_t>{10, 25, 30, 35});
    // The old port took minibatch_size / T_pad = 25 / 30 -> 1 padded sequence per minibatch: 6 minibatches.
    CHECK(mbs.size() == 4);
  }
  SECTION("minibatch 30: 3 minibatches, the last sequence is not trained on") {
    const auto mbs = rllib_minibatches(lens, 30);
    CHECK(mbs == std::vector<SequenceRange>{{0, 2}, {2, 3}, {3, 5}});
    CHECK(step_counts(lens, mbs) == std::vector<int64_t>{30, 5, 45});
  }
  SECTION("a minibatch at least as large as the batch is the whole batch") {
    CHECK(rllib_minibatches(lens, 100) == std::vector<SequenceRange>{{0, 6}});
    CHECK(rllib_minibatches(lens, 8192) == std::vector<SequenceRange>{{0, 6}});
  }
  SECTION("minibatch 99: one minibatch of the sequences before the one holding step 99") {
    CHECK(rllib_minibatches(lens, 99) == std::vector<SequenceRange>{{0, 5}});
  }
}

TEST_CASE("equal lengths: each minibatch holds about minibatch_size real steps", "[agents][minibatches]") {
  const std::vector<int64_t> lens(64, 52);  // 64 RepeatFirstEasy episodes, 3,328 steps
  const auto mbs = rllib_minibatches(lens, 1024);
  REQUIRE(mbs.size() == 3);  // floor(3328 / 1024)
  CHECK(mbs == std::vector<SequenceRange>{{0, 19}, {19, 39}, {39, 59}});
  CHECK(step_counts(lens, mbs) == std::vector<int64_t>{988, 1040, 1040});
}

TEST_CASE("POPGym-sized batch with variable lengths", "[agents][minibatches]") {
  // CartPole-like episodes: a deterministic mix of short and long, 65,536+ steps as in one POPGym iteration.
  std::vector<int64_t> lens;
  int64_t total = 0;
  for (int64_t i = 0; total < 65536; ++i) {
    lens.push_back(8 + (i * 37) % 193);
    total += lens.back();
  }
  const auto mbs = rllib_minibatches(lens, 8192);
  CHECK(static_cast<int64_t>(mbs.size()) == total / 8192);
  int64_t next = 0;
  for (const auto& r : mbs) {
    CHECK(r.begin == next);  // contiguous, in batch order, each sequence at most once
    next = r.end;
    // Whole sequences around the cut points: within one sequence length of 8,192 real steps.
    CHECK(std::abs(real_steps(lens, r) - 8192) < 201);
  }
  // Only the tail after the last full minibatch is left out.
  int64_t trained = 0;
  for (const auto& r : mbs) trained += real_steps(lens, r);
  CHECK(total - trained < 8192 + 201);
}

TEST_CASE("a sequence longer than the minibatch makes empty minibatches, as in RLlib", "[agents][minibatches]") {
  const std::vector<int64_t> lens = {5, 100, 5};
  const auto mbs = rllib_minibatches(lens, 10);
  REQUIRE(mbs.size() == 11);
  CHECK(mbs[0] == SequenceRange{0, 1});
  for (size_t i = 1; i < 10; ++i) CHECK(mbs[i].empty());
  CHECK(mbs[10] == SequenceRange{1, 3});
}
