// The pycolab board shared by Memory-RL's credit-assignment tasks (Visual Match, Key-to-Door):
// every phase is a 7×11 grid of ASCII characters, drawn from ASCII art. A Board holds one such grid: a phase's
// backdrop, or the frame pycolab rendered from it (backdrop, then sprites and drapes in z-order). The player walks as
// pycolab's MazeWalker does: one cell per action, blocked by the board's edge and by the impassable characters of the
// *previously rendered* frame (pycolab hands every entity the board of the last render, so a move sees where the
// others were, not where they are going).
#pragma once
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace rlm::envs::memory_rl::pycolab {

inline constexpr int kRows = 7, kCols = 11;

struct Cell {
  int row = 0, col = 0;
  bool operator==(const Cell&) const = default;
};

/// [row, col] as the golden files store a cell.
inline Cell cell_from_json(const nlohmann::json& j) { return {j.at(0).get<int>(), j.at(1).get<int>()}; }

/// A phase's ASCII art, one string of kCols characters per row.
using Art = std::array<std::string_view, kRows>;

/// The cells of `art` holding `ch`, in row-major order (the order numpy's argwhere lists them in the reference).
std::vector<Cell> cells_of(const Art& art, char ch);

class Board {
 public:
  Board() { cells_.fill(' '); }
  /// The art with every character in `erase` replaced by ' ' (the sprites' cells: pycolab's what_lies_beneath).
  static Board from_art(const Art& art, std::string_view erase = "");

  static bool on_board(Cell c) { return c.row >= 0 && c.row < kRows && c.col >= 0 && c.col < kCols; }
  char at(Cell c) const { return cells_[index(c)]; }
  void set(Cell c, char ch) { cells_[index(c)] = ch; }

 private:
  static size_t index(Cell c) { return static_cast<size_t>(c.row * kCols + c.col); }
  std::array<char, kRows * kCols> cells_;
};

/// The cell one step from `from` in the direction of `action`: 0 north (row − 1), 1 south, 2 west (col − 1), 3 east.
Cell neighbour(Cell from, int64_t action);

/// MazeWalker's move (confined to the board): moves `player` one cell unless the target is off the board or its
/// character on `last_render` is in `impassable`. action < 0 is pycolab's None (a phase's frame-0 pass): no move.
void walk(Cell& player, int64_t action, const Board& last_render, std::string_view impassable);

}  // namespace rlm::envs::memory_rl::pycolab
