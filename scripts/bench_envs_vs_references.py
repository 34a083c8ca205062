#!/usr/bin/env python3
"""Times the reference implementations of the non-POPGym envs on this machine and compares them with our C++ envs.

Usage:  PYTHON -m scripts.bench_envs_vs_references CPP_BENCH_JSON [CPP_BENCH_JSON ...]
            --memory-rl PATH --pomdp-baselines PATH [--seconds S] [--json OUT] [--markdown OUT]
CPP_BENCH_JSON is what `rlm_env_bench --json` wrote (several files, e.g. from runs with different --filter, are
merged). PYTHON needs what the reference code imports: numpy<1.24 and pycolab==1.2 (Memory-RL's pycolab tasks), gym,
matplotlib (imported by envs/tmaze.py and pomdp-baselines' toy_navigation modules), e.g. a venv with
`pip install pycolab==1.2 numpy==1.23.5 gym==0.26.2 matplotlib`. The checkouts are only run, from the paths given.

Protocol (the one of scripts/bench_envs_vs_python.py for POPGym): each side steps one env single-threaded with random
valid actions and resets when an episode ends. The C++ figure is rlm_env_bench's "raw_16envs_1thread" column (VecEnv
API, no wrappers); the Python one is a plain env.step loop over actions drawn before the clock starts. Prints steps/s
for both, their ratio, the median ratio and the minimum.

The reference envs are built with the settings of our ids' default env.options (variant "shm"):
- memory_rl/TMazePassive, TMazeActive: Memory-RL envs/tmaze.py TMazeClassicPassive / TMazeClassicActive, corridor
  length 10, penalty -1/10 (as scripts/record_memory_rl.py builds them).
- memory_rl/PassiveVisualMatch, ActiveVisualMatch, KeyToDoor: Memory-RL envs/key_to_door/tvt_wrapper, SHM's settings
  with D = 100 (scripts/record_memory_rl_pycolab.py's build(), with its shims).
- meta/Wind, meta/PointRobot: pomdp-baselines envs/meta/toy_navigation WindEnv / SparsePointEnv inside its
  VariBadWrapper (which does the [-1, 1] action mapping and, for Point Robot, the k = 2 inner episodes our env
  includes), with the SHM variant's horizon, task count and goal radius passed as constructor kwargs (SHM's copy of
  these classes differs only in constants that do not change the work of a step: the wind range, the seeding);
  each episode plays a task drawn from a 50-task train split, as ours. A second figure, the bare env without the
  wrapper (actions drawn in its own Box(-0.1, 0.1), one inner episode), is printed beside it.
- kf/BestArm: no public reference implementation; not timed on the Python side.
"""
import argparse
import contextlib
import io
import itertools
import json
import os
import statistics
import sys
import types

import numpy as np

from scripts import bench_timing
from scripts import record_memory_rl_pycolab as pycolab_rec  # our recording script: shims and construction
from scripts import record_pomdp_baselines as meta_rec

NO_REFERENCE = {"kf/BestArm": "no public reference implementation"}
TMAZE_CORRIDOR = 10  # env.options.corridor_length default
PYCOLAB_DISTRACTOR = 100  # variant shm's D
META = {  # id -> (module, class, kwargs of the SHM variant, VariBad episodes per task)
    "meta/Wind": ("wind", "WindEnv", {"max_episode_steps": 100, "n_tasks": 200, "goal_radius": 0.01}, 1),
    "meta/PointRobot": ("point_robot", "SparsePointEnv",
                        {"max_episode_steps": 100, "n_tasks": 200, "goal_radius": 0.05}, 2),
}
TRAIN_TASKS = 50
NUM_ACTIONS = 4096


class Reference:
    """One reference env ready to time: step(action) -> (obs, reward, done, info), reset(), pre-drawn actions."""

    def __init__(self, step, reset, actions):
        self.step, self.reset, self.actions = step, reset, actions


def discrete_actions(n, rng):
    return [int(a) for a in rng.integers(n, size=NUM_ACTIONS)]


def box_actions(low, high, rng):
    return list(rng.uniform(low, high, size=(NUM_ACTIONS, 2)).astype(np.float32))


def memory_rl_references(path, rng):
    pycolab_rec.install_shims()  # collections aliases, tensorflow.nest stand-in
    sys.path.insert(0, os.path.abspath(path))
    import envs.tmaze as tmaze  # noqa: E402  (the reference checkout)
    from envs.key_to_door import common, key_to_door, tvt_wrapper, visual_match  # noqa: E402

    ref = types.SimpleNamespace(common=common, key_to_door=key_to_door, tvt_wrapper=tvt_wrapper,
                                visual_match=visual_match)
    out = {}
    for name, cls in (("TMazePassive", tmaze.TMazeClassicPassive), ("TMazeActive", tmaze.TMazeClassicActive)):
        env = cls(corridor_length=TMAZE_CORRIDOR, penalty=-1.0 / TMAZE_CORRIDOR, distract_reward=0.0)
        out[f"memory_rl/{name}"] = Reference(env.step, env.reset, discrete_actions(4, rng))
    for name, game, passive in (("PassiveVisualMatch", "vm", True), ("ActiveVisualMatch", "vm", False),
                                ("KeyToDoor", "ktd", True)):
        env = pycolab_rec.build(ref, game, "shm", PYCOLAB_DISTRACTOR, passive, instance_seed=0)
        out[f"memory_rl/{name}"] = Reference(env.step, env.reset, discrete_actions(4, rng))
    return out


def meta_references(path, rng):
    path = os.path.abspath(path)
    wrappers = meta_rec.load_module("bench_meta_wrappers", os.path.join(path, "envs", "meta", "wrappers.py"))
    out = {}
    for canonical, (module_name, class_name, kwargs, episodes_per_task) in META.items():
        module = meta_rec.load_module(f"bench_{module_name}",
                                      os.path.join(path, "envs", "meta", "toy_navigation", module_name + ".py"))
        env = getattr(module, class_name)(**kwargs)
        wrapper = wrappers.VariBadWrapper(env=env, episodes_per_task=episodes_per_task)
        train = [int(t) for t in rng.permutation(kwargs["n_tasks"])[:TRAIN_TASKS]]
        tasks = itertools.cycle([int(t) for t in rng.choice(train, size=NUM_ACTIONS)])
        out[canonical] = Reference(wrapper.step, lambda w=wrapper, t=tasks: w.reset(task=next(t)),
                                   box_actions(-1.0, 1.0, rng))
        bare = getattr(module, class_name)(**kwargs)
        out[canonical + " (bare env)"] = Reference(bare.step, bare.reset,
                                                   box_actions(bare.action_space.low, bare.action_space.high, rng))
    return out


def python_steps_per_second(ref, seconds):
    return bench_timing.steps_per_second(lambda a: ref.step(a)[2], ref.reset, ref.actions, seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cpp_json", nargs="+")
    parser.add_argument("--memory-rl", required=True, help="path to a twni2016/Memory-RL checkout")
    parser.add_argument("--pomdp-baselines", required=True, help="path to a twni2016/pomdp-baselines checkout")
    parser.add_argument("--seconds", type=float, default=2.0, help="Python timing per env")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    cpp = {}
    for path in args.cpp_json:
        cpp.update({r["id"]: r for r in json.load(open(path))["results"]})

    np.random.seed(0)  # numpy's global generator: T-maze goals, pycolab layouts, Point Robot start states
    rng = np.random.default_rng(0)
    with contextlib.redirect_stdout(io.StringIO()):  # Memory-RL's T-maze prints its map when built
        refs = {**memory_rl_references(args.memory_rl, rng), **meta_references(args.pomdp_baselines, rng)}
    timed = {k.split(" ")[0] for k in refs}
    missing = sorted(i for i in timed if i not in cpp)
    if missing:
        sys.exit(f"bench_envs_vs_references: no C++ figure for {', '.join(missing)} in {', '.join(args.cpp_json)}")
    wanted = sorted(timed | {i for i in NO_REFERENCE if i in cpp})

    rows, skipped = [], []
    print(f"{'id':<30} {'C++ steps/s':>15} {'python steps/s':>15} {'ratio':>8}  {'bare env: python, ratio':>24}")
    for canonical in wanted:
        ours = cpp[canonical]["raw_16envs_1thread"]
        if canonical in NO_REFERENCE:
            skipped.append({"id": canonical, "cpp": ours, "reason": NO_REFERENCE[canonical]})
            print(f"{canonical:<30} {ours:>15,.0f} {'-':>15} {'-':>8}  ({NO_REFERENCE[canonical]})")
            continue
        py = python_steps_per_second(refs[canonical], args.seconds)
        row = {"id": canonical, "cpp": ours, "python": py, "ratio": ours / py}
        extra = ""
        if canonical + " (bare env)" in refs:
            bare = python_steps_per_second(refs[canonical + " (bare env)"], args.seconds)
            row.update(python_bare_env=bare, ratio_bare_env=ours / bare)
            extra = f"{bare:>15,.0f} {ours / bare:>7.0f}x"
        rows.append(row)
        print(f"{canonical:<30} {ours:>15,.0f} {py:>15,.0f} {ours / py:>7.0f}x  {extra}", flush=True)
    ratios = [r["ratio"] for r in rows]
    lowest = min(rows, key=lambda r: r["ratio"])
    summary = {"median_ratio": statistics.median(ratios), "min_ratio": lowest["ratio"], "min_ratio_id": lowest["id"]}
    untimed = f"; not timed in Python: {', '.join(s['id'] for s in skipped)}" if skipped else ""
    print(f"median ratio {summary['median_ratio']:.0f}x, lowest {summary['min_ratio']:.0f}x ({summary['min_ratio_id']})"
          f" over {len(rows)} ids{untimed}")
    versions = {"python": sys.version.split()[0], "numpy": np.__version__}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "skipped": skipped, "versions": versions, **summary}, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| id | C++ steps/s | python steps/s | ratio | bare env: python steps/s, ratio |\n"
                    "|---|---|---|---|---|\n")
            for r in rows:
                bare = f"{r['python_bare_env']:,.0f}, {r['ratio_bare_env']:.0f}x" if "python_bare_env" in r else "–"
                f.write(f"| {r['id']} | {r['cpp']:,.0f} | {r['python']:,.0f} | {r['ratio']:.0f}x | {bare} |\n")
            for s in skipped:
                f.write(f"| {s['id']} | {s['cpp']:,.0f} | – ({s['reason']}) | – | – |\n")
            f.write(f"\nmedian ratio {summary['median_ratio']:.0f}x, lowest {summary['min_ratio']:.0f}x "
                    f"({summary['min_ratio_id']})\n")


if __name__ == "__main__":
    main()
