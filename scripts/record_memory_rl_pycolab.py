#!/usr/bin/env python3
"""Records golden trajectories and sampling statistics from Memory-RL's pycolab tasks (twni2016/Memory-RL,
envs/key_to_door: Passive/Active Visual Match and Key-to-Door) for the C++ tests.

Usage:  PYTHON -m scripts.record_memory_rl_pycolab --memory-rl PATH_TO_MEMORY_RL_CHECKOUT
PYTHON needs pycolab==1.2, numpy<1.24 (pycolab 1.2 hands a generator to np.vstack, which numpy 2 refuses; Memory-RL
pins numpy 1.23.0) and gym (any version: tvt_wrapper only subclasses gym.Env), e.g. a venv with
`pip install pycolab==1.2 numpy==1.23.5 gym==0.26.2`. Writes tests/data/memory_rl/<Env>_<variant>_D<D>.json (golden
episodes, D = 5 and 25) and tests/data/memory_rl/pycolab_sampling.json (draw statistics). --out-dir DIR --repeats N
writes N times the episodes to DIR/<same names>, for a larger one-off differential check
(RLM_SOURCE_DIR=ROOT ./build/test_envs "[visual_match],[key_to_door]" with DIR = ROOT/tests/data/memory_rl).

Shims, in this process only (the reference files are run as they are):
- collections.Mapping / collections.Sequence: pycolab 1.2 uses the aliases Python 3.10 removed.
- tensorflow.nest: envs/key_to_door/env.py imports it only for nest.map_structure over the {char: (r, g, b)} colour
  dict; a map over a dict of tuples stands in for it.
- numpy.random.RandomState: PycolabEnvironment builds an unseeded RandomState (Visual Match draws its colour
  permutation from it at construction and the target colour at every episode). While a reference env is built we
  hand it a seeded one, so the recording is reproducible; numpy's global generator (every layout: target cell, start
  cell, key cell, apples) is seeded per episode.

Settings: variant "shm" = SHM's pomdp-baselines registrations (VM 15/D/10, final 10; KtD 10/D/3, final 10;
thaihungle/SHM@651f9e2:pomdp-baselines/envs/credit_assign/), "original" = Memory-RL's configs (VM 15/D/15, final 5;
KtD 15/D/10, final 5; twni2016/Memory-RL@c9b8b39:configs/envs/{visual_match,keytodoor}.py); apple reward 1.0, 10 apples,
respawn_every 20, the wrappers' fix_apple_reward_in_episode=True. Active VM takes the VM settings with passive=False.

Per golden episode: the draws that reproduce it (read from the live pycolab engines, not from the RNG calls: pycolab's
Story builds every chapter once more in its constructor and discards it) as "initial_state", the actions, every obs
as the base64 of the wrapper's 75 uint8 values (obs[0] = reset obs), the rewards, done and info["success"].
Policies: "random" (uniform actions), "optimal" (scripted: see the colour / fetch the key, eat the nearest apple, walk
to the matching object / the door), "failing" (scripted: walk to a wrong object / never touch the key) and, at D = 25,
"camp" (optimal, but after the first apple it steps off that cell and back, so the apple respawns and is eaten again).

Sampling statistics: over --episodes resets of each env (numpy's global generator seeded once), how often each target
colour, target cell, start cell, key cell and apple cell was drawn and how many apples each distractor phase had; over
--instances Visual Match instances (each RandomState seeded differently), how often each colour permutation occurred.
"""
import argparse
import base64
import collections
import collections.abc
import itertools
import json
import os
import sys
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SETTINGS = {  # variant -> game -> (explore frames, reward frames, final reward)
    "shm": {"vm": (15, 10, 10.0), "ktd": (10, 3, 10.0)},
    "original": {"vm": (15, 15, 5.0), "ktd": (15, 10, 5.0)},
}
HUES = {(1000, 0, 0): 0, (0, 1000, 0): 1, (0, 0, 1000): 2}  # hue k/3 at full saturation and value, x1000
PERMUTATIONS = list(itertools.permutations(range(3)))  # lexicographic: the index the stats file counts
MOVES = {0: (-1, 0), 1: (1, 0), 2: (0, -1), 3: (0, 1)}  # N, S, W, E


def install_shims():
    for name in ("Mapping", "Sequence"):
        setattr(collections, name, getattr(collections.abc, name))
    tf = types.ModuleType("tensorflow")
    nest = types.ModuleType("tensorflow.nest")
    nest.map_structure = lambda fn, s: {k: tuple(fn(x) for x in v) for k, v in s.items()}
    tf.nest = nest
    sys.modules["tensorflow"] = tf
    sys.modules["tensorflow.nest"] = nest


def build(ref, game, variant, distractor, passive=True, instance_seed=0):
    """One reference env (tvt_wrapper) with its per-instance RandomState seeded by instance_seed."""
    explore, reward, final = SETTINGS[variant][game]
    frames = {"explore": explore, "distractor": distractor, "reward": reward}
    original = np.random.RandomState

    class SeededRandomState(original):
        def __init__(self, seed=None):
            super().__init__(instance_seed if seed is None else seed)

    np.random.RandomState = SeededRandomState
    try:
        common = dict(flatten_img=True, one_hot_actions=False, apple_reward=1.0, final_reward=final, respawn_every=20,
                      max_frames=frames)
        if game == "vm":
            return ref.tvt_wrapper.VisualMatch(passive=passive, **common)
        return ref.tvt_wrapper.KeyToDoor(REWARD_GRID=ref.key_to_door.REWARD_GRID_SR, **common)
    finally:
        np.random.RandomState = original


def b64(obs):
    """The wrapper's 75 uint8 obs values (CHW, C-major) as base64."""
    return base64.b64encode(obs.astype(np.uint8).tobytes()).decode("ascii")


def current(env):
    return env.pycolab_env._episode.current_game


def chapter(env):
    return current(env).the_plot.this_chapter  # 0 explore, 1 distractor, 2 reward


def player(env):
    return tuple(int(x) for x in current(env).things["+"].position)


def board(env):
    return current(env)._board.board  # the last rendered board (uint8 characters)


def cell(position):
    return [int(position[0]), int(position[1])]


def explore_draws(env, game):
    """The draws behind the reset: read from the explore phase's engine."""
    things = current(env).things
    if game == "vm":
        colours = env.pycolab_env._game.colours
        target = next(c for c in "bce" if c in things)
        return {"colours": [HUES[tuple(colours[c])] for c in "bce"], "target": target,
                "target_cell": cell(things[target].position), "start_cell": cell(things["+"].position)}
    return {"key_cell": cell(things["k"].position), "start_cell": cell(things["+"].position)}


def apple_cells(env):
    curtain = current(env).things["a"].curtain
    return [cell(p) for p in np.argwhere(curtain)]


def first_move(env, goals, impassable):
    """First action of a shortest path from the player to any passable cell in goals (BFS over the rendered board), or
    None when none is reachable or the player stands on a goal."""
    b = board(env)
    start = player(env)
    goals = {tuple(g) for g in goals if 0 <= g[0] < b.shape[0] and 0 <= g[1] < b.shape[1]}
    goals = {g for g in goals if g == start or chr(b[g]) not in impassable}
    if start in goals:
        return None
    seen = {start: None}
    queue = collections.deque([start])
    while queue:
        here = queue.popleft()
        for a, (dr, dc) in MOVES.items():
            nxt = (here[0] + dr, here[1] + dc)
            if not (0 <= nxt[0] < b.shape[0] and 0 <= nxt[1] < b.shape[1]) or nxt in seen:
                continue
            if chr(b[nxt]) in impassable:
                continue
            seen[nxt] = a if here == start else seen[here]
            if nxt in goals:
                return seen[nxt]
            queue.append(nxt)
    return None


def policy_action(name, env, game, draws, rng):
    if name == "random":
        return int(rng.integers(4))
    ch = chapter(env)
    game_now = current(env)
    if ch == 1:  # distractor: the nearest apple (optimal), anything (failing), or camp by the first apple eaten
        last_pickup = game_now.things["a"]._last_pickup
        eaten = np.argwhere((last_pickup >= 0) & np.isfinite(last_pickup))
        if name == "camp" and len(eaten):  # step off the first apple's cell and back, to see it respawn and eat it
            first = tuple(int(x) for x in min(eaten, key=lambda c: last_pickup[tuple(c)]))
            if player(env) != first:
                return first_move(env, [first], "#")
            pr, pc = first
            return next(k for k, (dr, dc) in MOVES.items() if chr(board(env)[pr + dr, pc + dc]) != "#")
        if name in ("optimal", "camp"):
            a = first_move(env, apple_cells(env), "#")
            return int(rng.integers(4)) if a is None else a
        return int(rng.integers(4))
    if game == "vm":
        target = draws["target"]
        if ch == 0:  # walk next to the colour, then bump into it (it is impassable)
            tr, tc = draws["target_cell"]
            a = first_move(env, [(tr + dr, tc + dc) for dr, dc in MOVES.values()], "#" + target)
            if a is not None:
                return a
            pr, pc = player(env)
            return next(k for k, (dr, dc) in MOVES.items() if (pr + dr, pc + dc) == (tr, tc)) if (
                abs(pr - tr) + abs(pc - tc) == 1) else int(rng.integers(4))
        objects = {"b": (1, 2), "c": (1, 5), "e": (1, 8)}
        goal = target if name != "failing" else "bce"[("bce".index(target) + 1) % 3]
        a = first_move(env, [objects[goal]], "#" + "bce".replace(goal, ""))  # around the other objects
        return int(rng.integers(4)) if a is None else a
    if ch == 0:
        key = tuple(draws["key_cell"])
        if name != "failing" and not game_now.the_plot.get("has_key"):
            a = first_move(env, [key], "#id")
            return int(rng.integers(4)) if a is None else a
        if name == "failing":  # random moves that never enter the key cell
            pr, pc = player(env)
            choices = [k for k, (dr, dc) in MOVES.items() if (pr + dr, pc + dc) != key]
            return int(rng.choice(choices))
        return int(rng.integers(4))
    # Key-to-Door reward room: north to the door (blocked without the key), then wander.
    if not game_now.the_plot.get("has_key") and player(env) == (1, 5):
        return int(rng.integers(4))
    return 0


def record_episode(ref, game, variant, distractor, passive, seed, policy):
    env = build(ref, game, variant, distractor, passive, instance_seed=10_000 + seed)
    np.random.seed(seed)  # numpy's global generator: every layout draw
    rng = np.random.default_rng(1000 + seed)  # the policy's own stream
    obs = env.reset()
    draws = explore_draws(env, game)
    ep = {"seed": seed, "policy": policy, "initial_state": draws, "obs": [b64(obs)], "actions": [],
          "rewards": [], "done": [], "success": []}
    done = False
    while not done:
        a = policy_action(policy, env, game, draws, rng)
        obs, reward, done, info = env.step(a)
        if "apple_cells" not in draws and not done and chapter(env) == 1:
            draws["apple_cells"] = apple_cells(env)  # the distractor phase was just built, its frame 0 run
        ep["actions"].append(a)
        ep["obs"].append(b64(obs))
        ep["rewards"].append(float(reward))
        ep["done"].append(bool(done))
        ep["success"].append(bool(info.get("success", False)))
    assert obs.dtype == np.uint8 and obs.shape == (75,)
    return ep


def record_golden(ref, out_dir, repeats):
    names = {("vm", True): "PassiveVisualMatch", ("vm", False): "ActiveVisualMatch", ("ktd", True): "KeyToDoor"}
    total = 0
    for (game, passive), name in names.items():
        for variant in ("shm", "original"):
            for distractor in (5, 25):  # 25: an apple eaten on frame 1 is back on frame 22
                episodes = []
                policies = ["random", "optimal", "failing"] + (["camp"] if distractor == 25 else [])
                for r, (k, policy) in itertools.product(range(repeats), enumerate(policies)):
                    seed = 100 * distractor + 10 * k + (0 if variant == "shm" else 1) + (0 if passive else 5)
                    episodes.append(record_episode(ref, game, variant, distractor, passive, seed + 100_000 * r,
                                                   policy))
                explore, reward, final = SETTINGS[variant][game]
                data = {"canonical_id": f"memory_rl/{name}", "options": {"variant": variant,
                                                                         "distractor_length": distractor},
                        "reference": "twni2016/Memory-RL envs/key_to_door (tvt_wrapper), pycolab 1.2",
                        "phase_frames": [explore, distractor, reward], "final_reward": final, "episodes": episodes}
                path = os.path.join(out_dir, f"{name}_{variant}_D{distractor}.json")
                with open(path, "w") as f:
                    json.dump(data, f, separators=(",", ":"))
                total += os.path.getsize(path)
                print(f"wrote {path}: {len(episodes)} episodes, "
                      f"successes {sum(e['success'][-1] for e in episodes)}, "
                      f"returns {[sum(e['rewards']) for e in episodes]}")
    print(f"golden data: {total} bytes")


def counts_over(cells, drawn):
    index = {tuple(c): i for i, c in enumerate(cells)}
    out = [0] * len(cells)
    for c in drawn:
        out[index[tuple(c)]] += 1
    return out


def grid_cells(grid, ch):
    return [[r, c] for r, row in enumerate(grid) for c, x in enumerate(row) if x == ch]


def record_sampling(ref, out_dir, episodes, instances):
    """Frequencies of every draw over many resets (each env's layouts; apples over the distractor phase's starts) and
    of the Visual Match colour permutation over many env instances (the reference draws it once per instance)."""
    vm, ktd, common = ref.visual_match, ref.key_to_door, ref.common
    apple_candidates = grid_cells(common.APPLE_DISTRACTOR_GRID, "a")
    out = {"episodes": episodes, "instances": instances}
    for name, game, passive in (("PassiveVisualMatch", "vm", True), ("ActiveVisualMatch", "vm", False),
                                ("KeyToDoor", "ktd", True)):
        env = build(ref, game, "shm", 5, passive, instance_seed=7)
        np.random.seed(12345)
        drawn = collections.defaultdict(list)
        for _ in range(episodes):
            env.reset()
            d = explore_draws(env, game)
            while chapter(env) == 0:
                env.step(0)
            apples = apple_cells(env)
            drawn["num_apples"].append(len(apples))
            drawn["apple_cells"].extend(apples)
            for key in ("target_cell", "start_cell", "key_cell"):
                if key in d:
                    drawn[key].append(d[key])
            if "target" in d:
                drawn["target"].append("bce".index(d["target"]))
        stats = {"num_apples": {"counts": np.bincount(drawn["num_apples"]).tolist()},
                 "apple_cells": {"cells": apple_candidates, "n": episodes,
                                 "counts": counts_over(apple_candidates, drawn["apple_cells"])}}
        if game == "vm":
            grid = vm.PASSIVE_EXPLORE_GRID if passive else vm.EXPLORE_GRID
            stats["target"] = {"counts": np.bincount(drawn["target"], minlength=3).tolist()}
            stats["target_cell"] = {"cells": grid_cells(grid, "p")}
            stats["start_cell"] = {"cells": grid_cells(grid, "+")}
        else:
            stats["key_cell"] = {"cells": grid_cells(ktd.EXPLORE_GRID, "k")}
            stats["start_cell"] = {"cells": grid_cells(ktd.EXPLORE_GRID, "+")}
        for key in ("target_cell", "start_cell", "key_cell"):
            if key in stats:
                stats[key]["counts"] = counts_over(stats[key]["cells"], drawn[key])
        out[name] = stats
        print(f"{name}: {json.dumps(stats)[:300]}")
    perms = [0] * len(PERMUTATIONS)
    for i in range(instances):
        env = build(ref, "vm", "shm", 5, True, instance_seed=50_000 + i)
        colours = env.pycolab_env._game.colours
        perms[PERMUTATIONS.index(tuple(HUES[tuple(colours[c])] for c in "bce"))] += 1
    out["colour_permutation"] = {"permutations": [list(p) for p in PERMUTATIONS], "counts": perms}
    print(f"colour permutations over {instances} instances: {perms}")
    path = os.path.join(out_dir, "pycolab_sampling.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
    print(f"wrote {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memory-rl", required=True, help="path to a Memory-RL checkout")
    parser.add_argument("--episodes", type=int, default=3000, help="resets per env for the sampling statistics")
    parser.add_argument("--instances", type=int, default=1200, help="Visual Match instances for the permutation")
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "tests", "data", "memory_rl"))
    parser.add_argument("--repeats", type=int, default=1,
                        help="episodes per policy and file; more than 1 is a larger differential check, "
                             "not for the repo")
    args = parser.parse_args()
    install_shims()
    sys.path.insert(0, os.path.abspath(args.memory_rl))
    from envs.key_to_door import common, key_to_door, tvt_wrapper, visual_match  # noqa: E402 (the checkout)

    ref = types.SimpleNamespace(common=common, key_to_door=key_to_door, tvt_wrapper=tvt_wrapper,
                                visual_match=visual_match)
    os.makedirs(args.out_dir, exist_ok=True)
    record_golden(ref, args.out_dir, args.repeats)
    record_sampling(ref, args.out_dir, args.episodes, args.instances)


if __name__ == "__main__":
    main()
