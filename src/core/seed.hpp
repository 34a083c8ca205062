// One experiment seed derives every random stream (torch, each env, each episode, minibatch order), so a run is a
// pure function of its config and results never depend on thread counts or on how work is scheduled.
#pragma once
#include <cstdint>
#include <initializer_list>

namespace rlm {

/// splitmix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer with good avalanche.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Seed of the stream named by `path` under `base`, e.g. derive_seed(seed, {kEnvStream, env_index, episode}).
constexpr uint64_t derive_seed(uint64_t base, std::initializer_list<uint64_t> path) {
  uint64_t s = mix64(base);
  for (uint64_t p : path) s = mix64(s ^ mix64(p + 0x632BE59BD9B4E019ull));
  return s;
}

/// Stream names: the first element of every derive_seed path.
enum SeedStream : uint64_t {
  kEnvStream = 1,        ///< {kEnvStream, env_index, episode_index}: seed of one env episode
  kTorchStream = 2,      ///< torch's generator (action sampling, parameter init)
  kMinibatchStream = 3,  ///< minibatch order in SGD epochs
  kEvalStream = 4,       ///< evaluation episodes
  kReplayStream = 5,     ///< {kReplayStream, update}: the windows an off-policy update samples
  kUpdateStream = 6,     ///< {kUpdateStream, update}: an off-policy update's reparameterisation/smoothing noise
  kMemoryStream = 7,     ///< {kMemoryStream, phase, n}: the memories' own draws (SHM θ rows, spiking thresholds)
  kEnvInstanceStream =
      8,  ///< {kEnvInstanceStream, env_index}: what an env draws once per instance (InstanceSeededEnv::seed_instance)
};

}  // namespace rlm
