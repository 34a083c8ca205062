#include "envs/space.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace rlm::envs {
namespace {

bool is_index(float v, int64_t n) {
  // Also rejects NaN: every comparison with NaN is false.
  return v >= 0.0f && v < static_cast<float>(n) && v == std::floor(v);
}

}  // namespace

Space Space::discrete(int64_t n) {
  if (n < 1) throw EnvError(fmt::format("Discrete space needs n >= 1, got {}", n));
  Space s;
  s.kind = Kind::Discrete;
  s.nvec = {n};
  return s;
}

Space Space::multi_discrete(std::vector<int64_t> nvec) {
  for (int64_t n : nvec)
    if (n < 1) throw EnvError(fmt::format("MultiDiscrete space needs every n >= 1, got {}", n));
  Space s;
  s.kind = Kind::MultiDiscrete;
  s.nvec = std::move(nvec);
  return s;
}

Space Space::box(std::vector<float> low, std::vector<float> high) {
  if (low.size() != high.size())
    throw EnvError(fmt::format("Box bounds differ in size: {} low, {} high", low.size(), high.size()));
  for (size_t i = 0; i < low.size(); ++i)
    if (!(low[i] <= high[i])) throw EnvError(fmt::format("Box bound {}: low {} > high {}", i, low[i], high[i]));
  Space s;
  s.kind = Kind::Box;
  s.shape = {static_cast<int64_t>(low.size())};
  s.low = std::move(low);
  s.high = std::move(high);
  return s;
}

Space Space::image(int64_t channels, int64_t height, int64_t width) {
  if (channels < 1 || height < 1 || width < 1)
    throw EnvError(fmt::format("image space needs positive sizes, got ({}, {}, {})", channels, height, width));
  const auto dim = static_cast<size_t>(channels * height * width);
  Space s = box(std::vector<float>(dim, 0.0f), std::vector<float>(dim, 255.0f));
  s.shape = {channels, height, width};
  s.dtype = DType::UInt8;
  return s;
}

bool Space::is_image() const { return kind == Kind::Box && shape.size() == 3 && dtype == DType::UInt8; }

Space Space::tuple(std::vector<Space> parts) {
  Space s;
  s.kind = Kind::Tuple;
  s.parts = std::move(parts);
  return s;
}

int64_t Space::raw_size() const {
  switch (kind) {
    case Kind::Discrete:
      return 1;
    case Kind::MultiDiscrete:
      return static_cast<int64_t>(nvec.size());
    case Kind::Box:
      return static_cast<int64_t>(low.size());
    case Kind::Tuple: {
      int64_t total = 0;
      for (const Space& p : parts) total += p.raw_size();
      return total;
    }
  }
  return 0;
}

int64_t Space::encoded_size() const {
  switch (kind) {
    case Kind::Discrete:
    case Kind::MultiDiscrete: {
      int64_t total = 0;
      for (int64_t n : nvec) total += n;
      return total;
    }
    case Kind::Box:
      return static_cast<int64_t>(low.size());
    case Kind::Tuple: {
      int64_t total = 0;
      for (const Space& p : parts) total += p.encoded_size();
      return total;
    }
  }
  return 0;
}

bool Space::contains(std::span<const float> raw) const {
  return static_cast<int64_t>(raw.size()) == raw_size() && contains_at(raw.data());
}

bool Space::contains_at(const float* raw) const {
  switch (kind) {
    case Kind::Discrete:
    case Kind::MultiDiscrete:
      for (size_t i = 0; i < nvec.size(); ++i)
        if (!is_index(raw[i], nvec[i])) return false;
      return true;
    case Kind::Box:
      for (size_t i = 0; i < low.size(); ++i) {
        if (!(raw[i] >= low[i] && raw[i] <= high[i])) return false;
        if (dtype == DType::UInt8 && raw[i] != std::floor(raw[i])) return false;
      }
      return true;
    case Kind::Tuple:
      for (const Space& p : parts) {
        if (!p.contains_at(raw)) return false;
        raw += p.raw_size();
      }
      return true;
  }
  return false;
}

void Space::encode(std::span<const float> raw, std::span<float> out) const {
  if (static_cast<int64_t>(raw.size()) != raw_size() || static_cast<int64_t>(out.size()) != encoded_size())
    throw EnvError(fmt::format("encode into {}: got {} raw floats (want {}) and {} output floats (want {})",
                               to_string(), raw.size(), raw_size(), out.size(), encoded_size()));
  encode_at(raw.data(), out.data());
}

int64_t Space::encode_at(const float* raw, float* out) const {
  switch (kind) {
    case Kind::Discrete:
    case Kind::MultiDiscrete: {
      float* block = out;
      for (size_t i = 0; i < nvec.size(); ++i) {
        const int64_t n = nvec[i];
        if (!is_index(raw[i], n)) throw EnvError(fmt::format("cannot one-hot encode {} for {}", raw[i], to_string()));
        std::fill(block, block + n, 0.0f);
        block[static_cast<int64_t>(raw[i])] = 1.0f;
        block += n;
      }
      return static_cast<int64_t>(block - out);
    }
    case Kind::Box:
      std::copy(raw, raw + low.size(), out);
      return static_cast<int64_t>(low.size());
    case Kind::Tuple: {
      int64_t written = 0;
      for (const Space& p : parts) {
        const int64_t w = p.encode_at(raw, out + written);
        raw += p.raw_size();
        written += w;
      }
      return written;
    }
  }
  return 0;
}

Space Space::encoded_space() const {
  std::vector<float> lo, hi;
  bool any_bytes = false, all_bytes = true;
  auto append = [&](const Space& leaf, auto&& self) -> void {
    if (leaf.kind == Kind::Tuple) {
      for (const Space& p : leaf.parts) self(p, self);
    } else if (leaf.kind == Kind::Box) {
      lo.insert(lo.end(), leaf.low.begin(), leaf.low.end());
      hi.insert(hi.end(), leaf.high.begin(), leaf.high.end());
      any_bytes = any_bytes || leaf.dtype == DType::UInt8;
      all_bytes = all_bytes && leaf.dtype == DType::UInt8;
    } else {
      const int64_t n = leaf.encoded_size();
      lo.insert(lo.end(), static_cast<size_t>(n), 0.0f);
      hi.insert(hi.end(), static_cast<size_t>(n), 1.0f);
    }
  };
  append(*this, append);
  Space encoded = box(std::move(lo), std::move(hi));
  if (any_bytes && all_bytes) encoded.dtype = DType::UInt8;
  return encoded;
}

std::string Space::to_string() const {
  switch (kind) {
    case Kind::Discrete:
      return fmt::format("Discrete({})", nvec[0]);
    case Kind::MultiDiscrete:
      return fmt::format("MultiDiscrete([{}])", fmt::join(nvec, ", "));
    case Kind::Box:
      if (dtype == DType::Float32 && shape.size() <= 1) return fmt::format("Box({})", low.size());
      return fmt::format("Box({}{})", fmt::join(shape, ", "), dtype == DType::UInt8 ? "; uint8" : "");
    case Kind::Tuple: {
      std::string s = "Tuple(";
      for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i].to_string();
      return s + ")";
    }
  }
  return "?";
}

std::string Space::format_value(std::span<const float> raw) {
  if (raw.size() == 1) return fmt::format("{}", raw[0]);
  return fmt::format("[{}]", fmt::join(raw, ", "));
}

}  // namespace rlm::envs
