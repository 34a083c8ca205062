// Battleship (memory skill: remember the shots fired and their outcomes); follows popgym/envs/battleship.py.
#include "envs/popgym/battleship.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace rlm::envs::popgym {
namespace {

/// Placement is rejection sampling without backtracking, as upstream; a config whose ships cannot all fit would spin
/// forever there, here it throws after this many attempts for one ship (the presets need a handful).
constexpr int kMaxPlacementAttempts = 1'000'000;

Space grid_space(int num_cells, int64_t values) {
  return Space::multi_discrete(std::vector<int64_t>(static_cast<size_t>(num_cells), values));
}

}  // namespace

Battleship::Battleship(std::string id, BattleshipConfig config)
    : id_(std::move(id)),
      board_size_(config.board_size),
      num_cells_(config.board_size * config.board_size),
      ship_sizes_(std::move(config.ship_sizes)),
      needed_hits_(std::accumulate(ship_sizes_.begin(), ship_sizes_.end(), 0)) {
  if (board_size_ < 1) throw EnvError(fmt::format("{}: board_size must be >= 1, got {}", id_, board_size_));
  if (ship_sizes_.empty()) throw EnvError(fmt::format("{}: ship_sizes must not be empty", id_));
  for (int s : ship_sizes_)
    if (s < 1 || s > board_size_)
      throw EnvError(fmt::format("{}: every ship size must be in [1, {}], got {}", id_, board_size_, s));
  // The miss reward divides by the number of water cells.
  if (needed_hits_ >= num_cells_)
    throw EnvError(fmt::format("{}: the ships cover {} cells, the board has only {}", id_, needed_hits_, num_cells_));
  action_space_ = Space::multi_discrete({board_size_, board_size_});
  state_space_ = Space::tuple({grid_space(num_cells_, 2), grid_space(num_cells_, 2), Space::discrete(2)});
  hit_reward_ = static_cast<float>(1.0 / needed_hits_);
  miss_reward_ = static_cast<float>(-1.0 / (num_cells_ - needed_hits_));
  board_.assign(static_cast<size_t>(num_cells_), 0);
  guesses_.assign(static_cast<size_t>(num_cells_), 0);
}

bool Battleship::try_place_ship(int size) {
  // Upstream draws the start cell (row, col), then (axis, sign): the ship runs from start along `axis`, towards
  // larger indices if sign = 0, smaller ones otherwise.
  const int start[2] = {static_cast<int>(rng_.uniform_int(static_cast<uint64_t>(board_size_))),
                        static_cast<int>(rng_.uniform_int(static_cast<uint64_t>(board_size_)))};
  const auto axis = static_cast<int>(rng_.uniform_int(2));
  const auto sign = static_cast<int>(rng_.uniform_int(2));
  int end[2] = {start[0], start[1]};
  end[axis] += (sign == 0 ? 1 : -1) * (size - 1);
  if (end[axis] < 0 || end[axis] >= board_size_) return false;
  const int r0 = std::min(start[0], end[0]), r1 = std::max(start[0], end[0]);
  const int c0 = std::min(start[1], end[1]), c1 = std::max(start[1], end[1]);
  for (int r = r0; r <= r1; ++r)
    for (int c = c0; c <= c1; ++c)
      if (board_[cell(r, c)]) return false;
  for (int r = r0; r <= r1; ++r)
    for (int c = c0; c <= c1; ++c) board_[cell(r, c)] = 1;
  return true;
}

void Battleship::reset(uint64_t seed, std::span<float> obs) {
  rng_.reseed(seed);
  std::fill(board_.begin(), board_.end(), uint8_t{0});
  for (int size : ship_sizes_) {
    int attempts = 0;
    while (!try_place_ship(size))
      if (++attempts == kMaxPlacementAttempts)
        throw EnvError(fmt::format("{}: could not place a ship of size {} after {} attempts", id_, size, attempts));
  }
  start_episode(obs);
}

void Battleship::restore_golden(const nlohmann::json& state, std::span<float> obs) {
  const auto board = state.at("board").get<std::vector<int>>();
  if (board.size() != board_.size()) throw EnvError(fmt::format("{}: golden board has the wrong size", id_));
  std::copy(board.begin(), board.end(), board_.begin());
  start_episode(obs);
}

void Battleship::start_episode(std::span<float> obs) {
  std::fill(guesses_.begin(), guesses_.end(), uint8_t{0});
  hits_ = 0;
  steps_ = 0;
  last_obs_ = 0;
  has_state_ = true;
  obs[0] = 0;
}

StepResult Battleship::step(std::span<const float> action, std::span<float> obs) {
  if (!action_space_.contains(action)) [[unlikely]]
    throw_invalid_action(id_, action, action_space_);
  if (!has_state_) [[unlikely]]
    throw_env_misuse(id_, "step() called before the first reset()");
  const size_t c = cell(static_cast<int>(action[0]), static_cast<int>(action[1]));
  const bool hit = board_[c] && !guesses_[c];
  guesses_[c] = 1;
  hits_ += hit;
  ++steps_;
  StepResult r;
  // Both are tested independently, as upstream: a sinking shot on step B*B sets both.
  r.truncated = steps_ >= num_cells_;
  r.terminated = hits_ == needed_hits_;
  r.reward = hit ? hit_reward_ : miss_reward_;
  last_obs_ = hit;
  obs[0] = static_cast<float>(hit);
  return r;
}

void Battleship::write_state(std::span<float> state) const {
  const auto n = static_cast<size_t>(num_cells_);
  for (size_t i = 0; i < n; ++i) {
    state[i] = board_[i];
    state[n + i] = guesses_[i];
  }
  state[2 * n] = static_cast<float>(last_obs_);
}

}  // namespace rlm::envs::popgym
