// The agent's 5×5 RGB view of a pycolab board; see pycolab_view.hpp.
#include "envs/memory_rl/pycolab_view.hpp"

namespace rlm::envs::memory_rl::pycolab {

Palette::Palette() {
  set('+', from_pycolab(898, 584, 430));  // player
  set('#', from_pycolab(100, 100, 100));  // wall
  set(' ', from_pycolab(800, 800, 800));  // background, also beyond the board
  set('k', from_pycolab(627, 321, 176));  // key
  set('d', from_pycolab(529, 808, 922));  // door
  set('a', from_pycolab(550, 700, 0));    // apple
}

void write_view(const Board& rendered, Cell centre, const Palette& palette, std::span<float> obs) {
  constexpr int kHalf = kViewSize / 2, kPlane = kViewSize * kViewSize;
  for (int r = 0; r < kViewSize; ++r)
    for (int c = 0; c < kViewSize; ++c) {
      const Cell cell{centre.row - kHalf + r, centre.col - kHalf + c};
      const Rgb& rgb = palette[Board::on_board(cell) ? rendered.at(cell) : ' '];
      const auto i = static_cast<size_t>(r * kViewSize + c);
      obs[i] = rgb.r;
      obs[i + kPlane] = rgb.g;
      obs[i + 2 * kPlane] = rgb.b;
    }
}

}  // namespace rlm::envs::memory_rl::pycolab
