// The pycolab board and MazeWalker movement; see pycolab_board.hpp.
#include "envs/memory_rl/pycolab_board.hpp"

namespace rlm::envs::memory_rl::pycolab {

std::vector<Cell> cells_of(const Art& art, char ch) {
  std::vector<Cell> out;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c)
      if (art[static_cast<size_t>(r)][static_cast<size_t>(c)] == ch) out.push_back({r, c});
  return out;
}

Board Board::from_art(const Art& art, std::string_view erase) {
  Board b;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) {
      const char ch = art[static_cast<size_t>(r)][static_cast<size_t>(c)];
      b.set({r, c}, erase.find(ch) == std::string_view::npos ? ch : ' ');
    }
  return b;
}

Cell neighbour(Cell from, int64_t action) {
  static constexpr int kRowStep[4] = {-1, 1, 0, 0}, kColStep[4] = {0, 0, -1, 1};
  return {from.row + kRowStep[action], from.col + kColStep[action]};
}

void walk(Cell& player, int64_t action, const Board& last_render, std::string_view impassable) {
  if (action < 0) return;
  const Cell to = neighbour(player, action);
  if (!Board::on_board(to) || impassable.find(last_render.at(to)) != std::string_view::npos) return;
  player = to;
}

}  // namespace rlm::envs::memory_rl::pycolab
