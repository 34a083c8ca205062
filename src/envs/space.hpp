// Observation and action spaces: the shape contract between envs, wrappers, VecEnv buffers and the trainer.
// Values always travel as flat floats ("raw layout"), discrete values included (the integer stored as a float);
// encode() gives gymnasium's flatten semantics (one-hot for discrete parts), which is what the networks see.
// A Box also has a shape and a dtype: an image is Box(3, 5, 5; uint8), its raw floats the pixel values 0..255 in
// C-major order. The shape reaches the model (a CNN encoder sees an image, not a vector) and the dtype the
// replay buffer (uint8 storage, 4x smaller); the env contract stays flat floats, which for the papers' 5x5 views costs
// nothing and keeps one buffer type through wrappers and VecEnv.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rlm::envs {

struct Space {
  enum class Kind { Discrete, MultiDiscrete, Box, Tuple };
  enum class DType { Float32, UInt8 };

  Kind kind = Kind::Discrete;
  std::vector<int64_t> nvec;     ///< Discrete: {n}; MultiDiscrete: the size of every component
  std::vector<float> low, high;  ///< Box bounds, flat (size = dim)
  std::vector<Space> parts;      ///< Tuple sub-spaces, in layout order
  std::vector<int64_t> shape;    ///< Box: the array's shape, product = dim; {dim} for a flat Box
  DType dtype = DType::Float32;  ///< Box: the values' type; UInt8 values are integers in [low, high]

  static Space discrete(int64_t n);
  static Space multi_discrete(std::vector<int64_t> nvec);
  static Space box(std::vector<float> low, std::vector<float> high);
  static Space tuple(std::vector<Space> parts);
  /// Box(channels, height, width; uint8) with bounds [0, 255]: an image observation, C-major (CHW).
  static Space image(int64_t channels, int64_t height, int64_t width);

  /// A Box of rank 3 and dtype uint8: what a CNN encoder takes.
  bool is_image() const;

  /// Floats in the raw layout: Discrete 1, MultiDiscrete nvec.size(), Box dim, Tuple the sum over parts.
  int64_t raw_size() const;
  /// Floats after one-hot/flatten: Discrete n, MultiDiscrete sum(nvec), Box dim, Tuple the sum over parts.
  int64_t encoded_size() const;
  /// Discrete parts hold integers in range, Box parts lie within their bounds. False on a size mismatch.
  bool contains(std::span<const float> raw) const;
  /// Writes every one of the encoded_size() floats of `out`. Throws rlm::EnvError on an out-of-range discrete value
  /// (a one-hot index outside its block would otherwise write into the neighbouring part).
  void encode(std::span<const float> raw, std::span<float> out) const;
  /// The Box that encode() maps into: bounds [0, 1] for one-hot blocks, the part's own bounds for Box parts. Its
  /// dtype is uint8 when some part is a uint8 Box and every other part one-hot (an image with the previous action):
  /// every encoded value is then a byte, which the replay buffer stores as one.
  Space encoded_space() const;
  /// e.g. "Discrete(4)", "MultiDiscrete([2, 3])", "Box(2)", "Box(3, 5, 5; uint8)", "Tuple(Discrete(4), Box(2))".
  std::string to_string() const;
  /// A raw value written for humans (errors): "7" for a Discrete value, "[0.5, 1]" for anything longer.
  static std::string format_value(std::span<const float> raw);

  bool operator==(const Space&) const = default;

 private:
  // Both return the number of floats consumed from raw (and for encode, written to out).
  int64_t encode_at(const float* raw, float* out) const;
  bool contains_at(const float* raw) const;
};

}  // namespace rlm::envs
