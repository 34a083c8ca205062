#!/usr/bin/env python3
"""Records what popgym 1.0.7's envs draw by themselves, as summary statistics, for tests/envs/test_sampling.cpp.

The golden replays (scripts/record_popgym.py) restore popgym's reset state and inject its per-step draws, so they
never compare the C++ envs' own sampling (shuffles, ship and mine placement, mazes, initial states, payouts, noise)
with popgym's. This script resets popgym's envs with many seeds and records the distribution of what they sample;
the C++ test draws the same statistics from its envs and compares the two with two-sample tests.

Run in the project venv (about 2 minutes on one core; the output is deterministic):
    .venv/bin/python -m scripts.record_popgym_sampling
Writes tests/data/popgym/sampling_stats.json (about 110 KB). Episode i of every env is reset(seed=i), i = 0 ..
episodes - 1; each env entry states its "episodes" (40,000 for most; 20,000 / 10,000 for the slow pure-Python mazes
at Easy / Hard; 10,000 bandit episodes of 200 or 600 pulls). The Easy level of every family is recorded, and Hard as
well where the level changes what is sampled beyond the deck count (board, grid and maze size, number of arms, the
category Concentration matches); more decks only lengthen the same uniform shuffle.

Every statistic is an object with a "kind", which says how the C++ test compares it:
  categorical  "counts": how often each value 0, 1, 2, ... occurred (one value per episode)
  table        "rows": one categorical per row, e.g. rows = deck positions, columns = cards
  cell_freq    "n", "counts": per cell, in how many of n episodes an event happened there (a ship, a mine, a wall)
  real         "n", "mean", "var", "m4" (population central moments) and a histogram: "edges" (ascending) and
               "counts" (len(edges) + 1 bins: below edges[0], [edges[i], edges[i+1]), ..., at or above edges[-1])
Grids are row-major; deck tables index positions as popgym's deck.idx does (cards are dealt from its end).
"""
import json
import os
import warnings
from collections import deque

import gymnasium as gym
import numpy as np
import popgym  # noqa: F401  (registers the ids)

warnings.filterwarnings("ignore", category=DeprecationWarning)  # the Labyrinths warn on construction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "popgym", "sampling_stats.json")
EPISODES = 40_000


def make(name):
    return gym.make(f"popgym-{name}-v0", disable_env_checker=True).unwrapped


# ---- statistics (see the docstring for their JSON form) ----

class Categorical:
    def __init__(self):
        self.counts = []

    def add(self, value):
        value = int(value)
        if value >= len(self.counts):
            self.counts += [0] * (value + 1 - len(self.counts))
        self.counts[value] += 1

    def json(self):
        return {"kind": "categorical", "counts": self.counts}


class Table:
    def __init__(self, rows, cols):
        self.rows = np.zeros((rows, cols), dtype=np.int64)

    def json(self):
        return {"kind": "table", "rows": self.rows.tolist()}


class CellFreq:
    def __init__(self, cells):
        self.n = 0
        self.counts = np.zeros(cells, dtype=np.int64)

    def add(self, mask):
        self.n += 1
        self.counts += np.asarray(mask, dtype=bool).ravel()

    def json(self):
        return {"kind": "cell_freq", "n": self.n, "counts": self.counts.tolist()}


class Real:
    def __init__(self, edges):
        self.edges = [float(e) for e in edges]
        self.values = []

    def add(self, value):
        self.values.append(float(value))

    def json(self):
        x = np.asarray(self.values, dtype=np.float64)
        d = x - x.mean()
        # Bin i + 1 holds edges[i] <= x < edges[i + 1]; bin 0 is below edges[0], the last bin at or above edges[-1].
        bins = np.searchsorted(np.asarray(self.edges), x, side="right")
        counts = np.bincount(bins, minlength=len(self.edges) + 1)
        return {"kind": "real", "n": int(x.size), "mean": float(x.mean()), "var": float(np.mean(d**2)),
                "m4": float(np.mean(d**4)), "edges": self.edges, "counts": counts.tolist()}


def entry(name, episodes, stats):
    return name, {"id": f"popgym/{name}", "episodes": episodes, **{k: s.json() for k, s in stats.items()}}


# ---- decks ----

def deck_positions(name):
    """Position x card counts of the shuffled deck right after reset."""
    env = make(name)
    n = env.deck.num_cards
    table = Table(n, n)
    for seed in range(EPISODES):
        env.reset(seed=seed)
        table.rows[np.arange(n), env.deck.idx] += 1
    return entry(name, EPISODES, {"deck_position_card": table})


def count_recall(name="CountRecallEasy"):
    """Both decks' position x card counts, and the joint ranks of their first dealt cards (are the decks
    independent?)."""
    env = make(name)
    n = env.value_deck.num_cards
    value, query, first_ranks = Table(n, n), Table(n, n), Categorical()
    for seed in range(EPISODES):
        env.reset(seed=seed)
        value.rows[np.arange(n), env.value_deck.idx] += 1
        query.rows[np.arange(n), env.query_deck.idx] += 1
        first_ranks.add(13 * env.value_deck.ranks_idx[env.value_deck.idx[-1]]
                        + env.query_deck.ranks_idx[env.query_deck.idx[-1]])
    return entry(name, EPISODES, {"value_position_card": value, "query_position_card": query,
                                  "first_ranks_value_query": first_ranks})


def concentration(name):
    """The category at every board position, and how many neighbouring positions share their category."""
    env = make(name)
    n = env.deck.num_cards
    table, same_neighbours = Table(n, env.facedown_card), Categorical()
    for seed in range(EPISODES):
        env.reset(seed=seed)
        categories = env.deck_idx_type[env.deck.idx]
        table.rows[np.arange(n), categories] += 1
        same_neighbours.add(np.sum(categories[1:] == categories[:-1]))
    return entry(name, EPISODES, {"position_category": table, "same_category_neighbours": same_neighbours})


# ---- boards ----

def battleship(name):
    """Ship occupancy per cell, and ship cells touching horizontally / vertically (orientation and packing)."""
    env = make(name)
    b = env.board_size
    cells, horizontal, vertical = CellFreq(b * b), Categorical(), Categorical()
    for seed in range(EPISODES):
        env.reset(seed=seed)
        board = env.board.astype(bool)
        cells.add(board)
        horizontal.add(np.sum(board[:, 1:] & board[:, :-1]))
        vertical.add(np.sum(board[1:, :] & board[:-1, :]))
    return entry(name, EPISODES, {"ship_cells": cells, "horizontal_ship_pairs": horizontal,
                                  "vertical_ship_pairs": vertical})


def mine_sweeper(name):
    """Mines per cell, mines touching each other (8-neighbourhood pairs), cells whose count is 0, and for a board
    with two mines which pair of cells holds them."""
    env = make(name)
    rows, cols = env.dims
    mines, touching, zero_counts, pair = CellFreq(rows * cols), Categorical(), Categorical(), Categorical()
    for seed in range(EPISODES):
        env.reset(seed=seed)
        grid = env.hidden_grid == 1
        mines.add(grid)
        flat = np.flatnonzero(grid)
        ys, xs = np.divmod(flat, cols)
        close = (np.abs(ys[:, None] - ys[None, :]) <= 1) & (np.abs(xs[:, None] - xs[None, :]) <= 1)
        touching.add((close.sum() - len(flat)) // 2)
        zero_counts.add(np.sum(env.neighbor_grid == 0))
        if len(flat) == 2:
            pair.add(flat[0] * rows * cols + flat[1])
    stats = {"mine_cells": mines, "touching_mine_pairs": touching, "cells_with_count_zero": zero_counts}
    if pair.counts:
        stats["mine_pair"] = pair  # index first * cells + second, first < second
    return entry(name, EPISODES, stats)


# ---- bandits ----

def multiarmed_bandit(name, episodes=10_000):
    """Payout probabilities (all arms pooled: they are independent), the best arm and its probability, and the
    payouts of a whole episode of uniformly random pulls as one standardised figure, sum(paid - p) /
    sqrt(sum p (1 - p)), about N(0, 1) when a pull pays with probability p. Per episode, not per pull: the pulls of
    an episode share their arms' probabilities, so per-pull counts would not be independent samples."""
    env = make(name)
    k = env.num_bandits
    top = 1.0 - 4.0 / (k + 1)  # most of the maximum's mass lies above this
    p_all, p_max, best = Real(np.linspace(0, 1, 21)), Real(np.linspace(top, 1, 21)), Categorical()
    payout_z = Real(np.linspace(-4, 4, 17))
    pulls = np.random.default_rng(12345)
    for seed in range(episodes):
        env.reset(seed=seed)
        p = env.bandits.astype(np.float64)
        for v in p:
            p_all.add(v)
        p_max.add(p.max())
        best.add(np.argmax(p))
        surprise = variance = 0.0
        for _ in range(env.max_episode_length):
            arm = int(pulls.integers(k))
            obs, *_ = env.step(arm)
            surprise += int(obs) - p[arm]
            variance += p[arm] * (1 - p[arm])
        payout_z.add(surprise / np.sqrt(variance))
    return entry(name, episodes, {"payout_probability": p_all, "max_payout_probability": p_max, "best_arm": best,
                                  "payout_z": payout_z})


# ---- classic control ----

def cartpole_initial_state(name):
    """The float64 state [x, x_dot, theta, theta_dot] drawn at reset, each component and adjacent products (a
    draw reused across components would correlate them)."""
    env = make(name)
    edges = np.linspace(-0.05, 0.05, 21)
    parts = [Real(edges) for _ in range(4)]
    products = [Real(np.linspace(-0.0025, 0.0025, 21)) for _ in range(3)]
    for seed in range(EPISODES):
        env.reset(seed=seed)
        s = np.asarray(env.state, dtype=np.float64)
        for i in range(4):
            parts[i].add(s[i])
        for i in range(3):
            products[i].add(s[i] * s[i + 1])
    names = ("x", "x_dot", "theta", "theta_dot")
    stats = {f"initial_{n}": p for n, p in zip(names, parts)}
    stats.update({f"initial_{names[i]}_times_{names[i + 1]}": products[i] for i in range(3)})
    return entry(name, EPISODES, stats)


def pendulum_initial_state(name):
    """theta ~ U(-pi, pi) and theta_dot ~ U(-1, 1) drawn at reset, and their product."""
    env = make(name)
    theta, theta_dot = Real(np.linspace(-np.pi, np.pi, 21)), Real(np.linspace(-1, 1, 21))
    product = Real(np.linspace(-np.pi, np.pi, 21))
    for seed in range(EPISODES):
        env.reset(seed=seed)
        theta.add(env.state[0])
        theta_dot.add(env.state[1])
        product.add(env.state[0] * env.state[1])
    return entry(name, EPISODES, {"initial_theta": theta, "initial_theta_dot": theta_dot,
                                  "initial_theta_times_theta_dot": product})


def noise_stats(name, sigma, true_obs, action):
    """Noise = obs - the float32 noise-free obs (after popgym's clipping), at reset and after the first step, per
    component, and the product of the two components' reset noise (they must be independent). One sample of each
    per episode: the clipping depends on the state, which later steps of an episode share."""
    env = make(name)
    edges = np.linspace(-4 * sigma, 4 * sigma, 17)
    reset_noise = [Real(edges) for _ in range(2)]
    step_noise = [Real(edges) for _ in range(2)]
    product = Real(np.linspace(-4 * sigma**2, 4 * sigma**2, 17))
    for seed in range(EPISODES):
        obs, _ = env.reset(seed=seed)
        noise = np.asarray(obs, dtype=np.float64) - true_obs(env)
        for i in range(2):
            reset_noise[i].add(noise[i])
        product.add(noise[0] * noise[1])
        obs, *_ = env.step(action)
        noise = np.asarray(obs, dtype=np.float64) - true_obs(env)
        for i in range(2):
            step_noise[i].add(noise[i])
    return {"reset_noise_0": reset_noise[0], "reset_noise_1": reset_noise[1], "step_noise_0": step_noise[0],
            "step_noise_1": step_noise[1], "reset_noise_product": product}


def noisy_cartpole(name="NoisyPositionOnlyCartPoleEasy"):
    """The initial state as for the other CartPoles, and the obs noise on [x, theta]."""
    _, stats = cartpole_initial_state(name)
    noise = noise_stats(name, 0.1, lambda env: np.asarray(env.state, dtype=np.float32)[[0, 2]], 1)
    stats.update({k: s.json() for k, s in noise.items()})
    return name, stats


def noisy_pendulum(name="NoisyPositionOnlyPendulumEasy"):
    """The initial state as for PositionOnlyPendulum, and the obs noise on [cos theta, sin theta]."""
    _, stats = pendulum_initial_state(name)
    noise = noise_stats(name, 0.1, lambda env: np.asarray(env._state[:2], dtype=np.float64),
                        np.zeros(1, dtype=np.float32))
    stats.update({k: s.json() for k, s in noise.items()})
    return name, stats


# ---- mazes ----

OPEN_MOVES = ((-1, 0), (1, 0), (0, -1), (0, 1))


def maze_summary(grid, start, end):
    """Per maze: rooms (odd, odd cells) with 1, >= 3 and 2 opposite open sides, horizontal passages, FREE cells, and
    the shortest path from the start to the exit (the exit cell counted as open, though LabyrinthExplore keeps it a
    wall; -1 if walls cut it off)."""
    rows, cols = grid.shape
    open_ = grid != 1
    dead_ends = junctions = straights = 0
    for y in range(1, rows, 2):
        for x in range(1, cols, 2):
            sides = [open_[y + dy, x + dx] for dy, dx in OPEN_MOVES]
            degree = sum(sides)
            dead_ends += degree == 1
            junctions += degree >= 3
            straights += degree == 2 and (sides[0] and sides[1] or sides[2] and sides[3])
    horizontal = int(np.sum(open_[1:-1:2, 2:-1:2]))  # passages between two rooms of a row
    passable = open_.copy()
    passable[end] = True
    dist = {start: 0}
    queue = deque([start])
    while queue:
        y, x = queue.popleft()
        for dy, dx in OPEN_MOVES:
            nxt = (y + dy, x + dx)
            if 0 <= nxt[0] < rows and 0 <= nxt[1] < cols and passable[nxt] and nxt not in dist:
                dist[nxt] = dist[(y, x)] + 1
                queue.append(nxt)
    return dead_ends, junctions, straights, horizontal, int(np.sum(grid == 0)), dist.get(end, -1)


def labyrinth(name, episodes):
    """Walls per cell (after START, and GOAL for LabyrinthEscape, are written), start and exit cells, and the
    per-maze shape statistics of maze_summary."""
    env = make(name)
    env.reset(seed=0)
    rows, cols = env.maze.grid.shape
    walls, start, end = CellFreq(rows * cols), Categorical(), Categorical()
    dead_ends, junctions, straights, horizontal, free = (Categorical() for _ in range(5))
    path = Real(np.arange(0, rows * cols // 2 + 1, 4))
    for seed in range(episodes):
        env.reset(seed=seed)
        grid = env.maze.grid
        s, e = tuple(int(v) for v in env.maze.start), tuple(int(v) for v in env.maze.end)
        walls.add(grid == 1)
        start.add(s[0] * cols + s[1])
        end.add(e[0] * cols + e[1])
        d, j, st, h, f, length = maze_summary(grid, s, e)
        for stat, v in zip((dead_ends, junctions, straights, horizontal, free), (d, j, st, h, f)):
            stat.add(v)
        if length > 0:  # mazelib leaves a room that no walk reached a wall in 1 maze in 20,000 to 50,000
            path.add(length)
    return entry(name, episodes, {"wall_cells": walls, "start_cell": start, "exit_cell": end, "dead_ends": dead_ends,
                                  "junctions": junctions, "straight_rooms": straights,
                                  "horizontal_passages": horizontal, "free_cells": free, "path_length": path})


# ---- output ----

def write(envs):
    """One line per statistic keeps the file readable in a diff and small."""
    lines = ["{", ' "popgym_version": "1.0.7",', ' "script": "scripts/record_popgym_sampling.py",', ' "envs": {']
    for i, (name, stats) in enumerate(envs):
        lines.append(f'  "{name}": {{')
        items = list(stats.items())
        for j, (key, value) in enumerate(items):
            comma = "," if j + 1 < len(items) else ""
            lines.append(f'   "{key}": {json.dumps(value, separators=(",", ":"))}{comma}')
        lines.append("  }" + ("," if i + 1 < len(envs) else ""))
    lines += [" }", "}", ""]
    with open(OUT + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(OUT + ".tmp", OUT)


def main():
    recorders = [
        lambda: deck_positions("AutoencodeEasy"),
        lambda: deck_positions("HigherLowerEasy"),
        lambda: deck_positions("RepeatFirstEasy"),
        lambda: deck_positions("RepeatPreviousEasy"),
        count_recall,
        lambda: concentration("ConcentrationEasy"),  # colours
        lambda: concentration("ConcentrationHard"),  # ranks: a biased shuffle shows in ranks, barely in colours
        lambda: battleship("BattleshipEasy"),
        lambda: battleship("BattleshipHard"),
        lambda: mine_sweeper("MineSweeperEasy"),
        lambda: mine_sweeper("MineSweeperHard"),
        lambda: multiarmed_bandit("MultiarmedBanditEasy"),
        lambda: multiarmed_bandit("MultiarmedBanditHard"),
        lambda: cartpole_initial_state("PositionOnlyCartPoleEasy"),
        lambda: cartpole_initial_state("VelocityOnlyCartpoleEasy"),
        noisy_cartpole,
        lambda: pendulum_initial_state("PositionOnlyPendulumEasy"),
        noisy_pendulum,
        lambda: labyrinth("LabyrinthEscapeEasy", 20_000),
        lambda: labyrinth("LabyrinthEscapeHard", 10_000),
        lambda: labyrinth("LabyrinthExploreEasy", 20_000),
        lambda: labyrinth("LabyrinthExploreHard", 10_000),
    ]
    envs = []
    for record in recorders:
        name, stats = record()
        envs.append((name, stats))
        print(f"{name}: {stats['episodes']} episodes, {len(stats) - 2} statistics", flush=True)
    write(envs)
    print(f"-> {os.path.relpath(OUT, ROOT)} ({os.path.getsize(OUT) // 1024} KB)")


if __name__ == "__main__":
    main()
