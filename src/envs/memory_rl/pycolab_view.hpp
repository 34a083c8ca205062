// What the agent sees of a pycolab board (Memory-RL envs/key_to_door/common.py get_cropper, env.py): the 5×5 window
// centred on the player, each character as its RGB colour, CHW order. pycolab's ScrollingCropper (5×5, scroll margins
// (2, 2), pad ' ') keeps the player in the centre cell: a 1-cell move puts it one cell inside a margin, and the window
// pans back; each phase starts centred. Cells beyond the board show the background ' '. Colours: pycolab triples
// (0..1000 per component), which the Memory-RL env maps to uint8 as trunc(c · 255 / 1000); the wrapper transposes HWC
// to CHW and flattens C-major, so the 75 values are the 25 reds row by row, then the greens, then the blues.
#pragma once
#include <array>
#include <cstdint>
#include <span>

#include "envs/memory_rl/pycolab_board.hpp"

namespace rlm::envs::memory_rl::pycolab {

inline constexpr int kViewSize = 5;
inline constexpr int64_t kViewValues = 3 * kViewSize * kViewSize;  // 75

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb&) const = default;
};

/// A pycolab colour (components 0..1000) as the env's uint8 triple. float(c) · 255 / 1000 is exact enough in double
/// that its truncation equals the integer quotient, so integer arithmetic reproduces it.
constexpr Rgb from_pycolab(int r, int g, int b) {
  return {static_cast<uint8_t>(r * 255 / 1000), static_cast<uint8_t>(g * 255 / 1000),
          static_cast<uint8_t>(b * 255 / 1000)};
}

/// The colour of every character a game can draw.
class Palette {
 public:
  /// common.FIXED_COLOURS: player, wall, background, key, door, apple.
  Palette();
  void set(char ch, Rgb colour) { colours_[static_cast<unsigned char>(ch) & 127] = colour; }
  const Rgb& operator[](char ch) const { return colours_[static_cast<unsigned char>(ch) & 127]; }

 private:
  std::array<Rgb, 128> colours_{};
};

/// Writes the 75 view values (as floats 0..255) of `rendered` around `centre` into `obs`.
void write_view(const Board& rendered, Cell centre, const Palette& palette, std::span<float> obs);

}  // namespace rlm::envs::memory_rl::pycolab
