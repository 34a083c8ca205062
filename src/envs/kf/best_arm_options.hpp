// The env.options that Best-Arm reads (KF paper §5.2; YAML keys flat in env.options, composed in envs/env_config.hpp).
#pragma once
#include <fmt/format.h>

#include "core/config_schema.hpp"

namespace rlm::envs::kf {

struct BestArmOptions {
  /// Cost ρ of requesting a sample (reward −ρ; the paper's heatmap uses 0).
  double request_cost = 0.0;
  /// The arm's noise σ ~ U(sigma_low, sigma_high) per episode; training U(0, 2), out of distribution U(2, 3).
  double sigma_low = 0.0;
  double sigma_high = 2.0;

  template <class V>
  void visit(V& v) {
    v.field("request_cost", request_cost, at_least(0));
    v.field("sigma_low", sigma_low, at_least(0));
    v.field("sigma_high", sigma_high, at_least(0));
  }
  void check(const CheckContext& c) const {
    if (sigma_low > sigma_high) {
      c.report({c.key("sigma_low"), c.key("sigma_high")},
               fmt::format("{} = {} exceeds {} = {}", c.key("sigma_low"), sigma_low, c.key("sigma_high"), sigma_high));
    }
  }
  bool operator==(const BestArmOptions&) const = default;
};

}  // namespace rlm::envs::kf
