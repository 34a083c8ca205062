// Shared by NoisyPositionOnlyCartPole and NoisyPositionOnlyPendulum: popgym's add_noise_to_obs, i.e.
// clip(obs + float32(np_random.normal(0, sigma, size=2)), low, high), drawn at reset and after every step.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>

#include "core/error.hpp"
#include "envs/rng.hpp"

namespace rlm::envs::popgym {

/// Gaussian noise on a 2-component observation. The values can be injected (golden replays), in which case the next
/// draw returns exactly them: numpy's normal(0, sigma) outputs, i.e. already multiplied by sigma.
class ObservationNoise {
 public:
  static constexpr size_t kSize = 2;

  ObservationNoise(const std::string& id, double sigma) : sigma_(sigma) {
    if (!(sigma >= 0.0 && std::isfinite(sigma)))
      throw EnvError(fmt::format("{}: noise_sigma must be finite and >= 0, got {}", id, sigma));
  }

  double sigma() const { return sigma_; }

  /// The next draw returns `draws` (numpy's normal() outputs in the order numpy drew them) instead of the RNG's.
  void inject(std::span<const double> draws, const std::string& id) {
    if (draws.size() != kSize)
      throw EnvError(fmt::format("{}: inject_draws expects {} noise values, got {}", id, kSize, draws.size()));
    for (size_t i = 0; i < kSize; ++i) injected_[i] = static_cast<float>(draws[i]);
    has_injected_ = true;
  }

  /// Adds one draw of noise to obs[0..1] in float32 and clips each component to [low[i], high[i]], as numpy does
  /// (float32 obs + float32 noise, then np.clip against the float32 Box bounds).
  void apply(Rng& rng, std::span<float> obs, const float* low, const float* high) {
    const std::array<float, kSize> noise = draw(rng);
    for (size_t i = 0; i < kSize; ++i) obs[i] = std::min(std::max(obs[i] + noise[i], low[i]), high[i]);
  }

 private:
  std::array<float, kSize> draw(Rng& rng) {
    if (has_injected_) {
      has_injected_ = false;
      return injected_;
    }
    // Box-Muller gives both components from one pair of uniforms. Not numpy's ziggurat: only the distribution has
    // to match (golden replays inject numpy's values instead). 1 - u lies in (0, 1], so the log is finite.
    const double radius = std::sqrt(-2.0 * std::log(1.0 - rng.uniform_01()));
    const double angle = 2.0 * 3.14159265358979323846 * rng.uniform_01();
    return {static_cast<float>(sigma_ * radius * std::cos(angle)),
            static_cast<float>(sigma_ * radius * std::sin(angle))};
  }

  double sigma_;
  std::array<float, kSize> injected_{};
  bool has_injected_ = false;
};

}  // namespace rlm::envs::popgym
