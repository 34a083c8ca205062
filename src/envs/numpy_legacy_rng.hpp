// numpy's legacy RandomState (np.random.seed / uniform / permutation / shuffle), bit for bit, for the task sets that
// reference code builds from a fixed seed (pomdp-baselines' and SHM's Wind and Point Robot: np.random.seed(1337) in
// the env constructor, then the learner's np.random.permutation for the train/eval split; docs/envs/meta.md). Envs draw
// their own episodes from Rng (rng.hpp); this is only for reproducing those fixed lists.
#pragma once
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace rlm::envs {

class NumpyLegacyRng {
 public:
  /// np.random.seed(seed) for an integer seed: MT19937's init_genrand, which std::mt19937 implements.
  explicit NumpyLegacyRng(uint32_t seed) : mt_(seed) {}

  /// np.random.random_sample(): 53 random bits from two 32-bit outputs (a >> 5, b >> 6).
  double random_sample() {
    const uint32_t a = static_cast<uint32_t>(mt_()) >> 5, b = static_cast<uint32_t>(mt_()) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

  /// np.random.uniform(low, high).
  double uniform(double low, double high) { return low + (high - low) * random_sample(); }

  /// numpy's random_interval(max): uniform in [0, max] by masked rejection (max < 2^32).
  uint32_t random_interval(uint32_t max) {
    if (max == 0) return 0;
    uint32_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    uint32_t value;
    while ((value = static_cast<uint32_t>(mt_()) & mask) > max) {
    }
    return value;
  }

  /// np.random.shuffle of a 1-d sequence (or of the rows of a 2-d array): Fisher-Yates from the end.
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i-- > 1;) std::swap(items[i], items[random_interval(static_cast<uint32_t>(i))]);
  }

  /// np.random.permutation(n).
  std::vector<int> permutation(int n) {
    std::vector<int> p(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) p[static_cast<size_t>(i)] = i;
    shuffle(p);
    return p;
  }

 private:
  std::mt19937 mt_;
};

}  // namespace rlm::envs
