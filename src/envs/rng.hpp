// Each env owns one of these engines and reseeds it on reset(seed), so an episode is a pure function of its seed.
// Our own uniform helpers (not std::uniform_*_distribution) keep trajectories identical across standard libraries.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/seed.hpp"

namespace rlm::envs {

/// xoshiro256** (Blackman & Vigna 2018): 32 bytes of state, so reseeding every episode costs four mix64 calls
/// (std::mt19937_64 would fill 2.5 KB per reset).
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    // splitmix64 expansion, as the xoshiro authors recommend; it never yields the forbidden all-zero state.
    for (int i = 0; i < 4; ++i) s_[i] = mix64(seed + static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull);
  }

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform integer in [0, n), n >= 1, exactly unbiased (Lemire 2019, multiply-and-reject).
  uint64_t uniform_int(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(next_u64()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  /// Uniform double in [0, 1) with 53 random bits.
  double uniform_01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  /// Uniform double in [low, high), computed as numpy does: low + (high - low) * u.
  double uniform(double low, double high) { return low + (high - low) * uniform_01(); }

  /// N(0, 1) by Box-Muller (one value of the pair): the distribution, not numpy's stream. 1 - u lies in (0, 1], so
  /// the log is finite.
  double standard_normal() {
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform_01()));
    return radius * std::cos(2.0 * 3.14159265358979323846 * uniform_01());
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace rlm::envs
