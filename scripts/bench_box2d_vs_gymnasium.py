#!/usr/bin/env python3
"""Times Gymnasium's Box2D tasks on this machine and compares them with our C++ ports (src/envs/box2d).

Usage:  PYTHON -m scripts.bench_box2d_vs_gymnasium CPP_BENCH_JSON [CPP_BENCH_JSON ...] [--seconds S]
            [--json OUT] [--markdown OUT]
CPP_BENCH_JSON is what `rlm_env_bench --json` wrote (several files are merged; e.g.
`./build/rlm_env_bench --filter box2d/ --json /tmp/cpp_box2d.json`). PYTHON needs gymnasium[box2d] (the pybox2d wheel
box2d==2.3.10), e.g. the reference venv of scripts/record_gymnasium_box2d.py:
    python3 -m venv ~/gym-box2d-venv && ~/gym-box2d-venv/bin/pip install "gymnasium[box2d]"
`./rlm bench envs` runs it when RLM_GYMNASIUM_PYTHON names that Python, writing
build/bench/box2d_vs_gymnasium.{json,md}.

Protocol (the one of scripts/bench_envs_vs_python.py and bench_envs_vs_references.py): each side steps one env
single-threaded with random valid actions (Discrete(4) uniform, Box uniform on [-1, 1]^d) and resets when an episode
ends (terminated, or truncated by the registered time limit). The C++ figure is rlm_env_bench's "raw_16envs_1thread"
column (VecEnv API, 16 envs stepped by one thread, no wrappers); the Python one is a plain env.step loop over
gymnasium.make(id) (its TimeLimit, OrderEnforcing and PassiveEnvChecker wrappers, as users get it), with the actions
drawn before the clock starts. Prints steps/s for both and their ratio.
"""
import argparse
import json
import statistics
import sys

import gymnasium as gym
import numpy as np

from scripts import bench_timing

IDS = {  # our id -> Gymnasium's
    "box2d/LunarLander": "LunarLander-v3",
    "box2d/LunarLanderContinuous": "LunarLanderContinuous-v3",
    "box2d/BipedalWalker": "BipedalWalker-v3",
    "box2d/BipedalWalkerHardcore": "BipedalWalkerHardcore-v3",
}
NUM_ACTIONS = 4096


def random_actions(space, rng):
    if isinstance(space, gym.spaces.Discrete):
        return [int(a) for a in rng.integers(space.n, size=NUM_ACTIONS)]
    low, high = np.maximum(space.low, -1.0), np.minimum(space.high, 1.0)
    return list(rng.uniform(low, high, size=(NUM_ACTIONS,) + space.shape).astype(np.float32))


def python_steps_per_second(env, actions, seconds):
    def step(a):
        _, _, terminated, truncated, _ = env.step(a)
        return terminated or truncated

    env.reset(seed=0)
    return bench_timing.steps_per_second(step, env.reset, actions, seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cpp_json", nargs="+")
    parser.add_argument("--seconds", type=float, default=2.0, help="Python timing per env")
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    cpp = {}
    for path in args.cpp_json:
        cpp.update({r["id"]: r for r in json.load(open(path))["results"]})
    missing = sorted(i for i in IDS if i not in cpp)
    if missing:
        sys.exit(f"bench_box2d_vs_gymnasium: no C++ figure for {', '.join(missing)} in {', '.join(args.cpp_json)}")

    rng = np.random.default_rng(0)
    rows = []
    print(f"{'id':<30} {'C++ steps/s':>15} {'gymnasium steps/s':>18} {'ratio':>8}")
    for ours_id, gym_id in IDS.items():
        env = gym.make(gym_id)
        py = python_steps_per_second(env, random_actions(env.action_space, rng), args.seconds)
        env.close()
        ours = cpp[ours_id]["raw_16envs_1thread"]
        rows.append({"id": ours_id, "gymnasium_id": gym_id, "cpp": ours, "python": py, "ratio": ours / py})
        print(f"{ours_id:<30} {ours:>15,.0f} {py:>18,.0f} {ours / py:>7.1f}x", flush=True)
    ratios = [r["ratio"] for r in rows]
    lowest = min(rows, key=lambda r: r["ratio"])
    summary = {"median_ratio": statistics.median(ratios), "min_ratio": lowest["ratio"], "min_ratio_id": lowest["id"]}
    print(f"median ratio {summary['median_ratio']:.1f}x, lowest {summary['min_ratio']:.1f}x "
          f"({summary['min_ratio_id']})")
    from importlib.metadata import version
    versions = {"python": sys.version.split()[0], "numpy": np.__version__, "gymnasium": gym.__version__,
                "box2d": version("box2d")}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "versions": versions, **summary}, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| id | C++ steps/s | Gymnasium steps/s | ratio |\n|---|---|---|---|\n")
            for r in rows:
                f.write(f"| {r['id']} ({r['gymnasium_id']}) | {r['cpp']:,.0f} | {r['python']:,.0f} | "
                        f"{r['ratio']:.1f}x |\n")
            f.write(f"\nmedian ratio {summary['median_ratio']:.1f}x, lowest {summary['min_ratio']:.1f}x "
                    f"({summary['min_ratio_id']}); gymnasium {versions['gymnasium']}, box2d {versions['box2d']}\n")


if __name__ == "__main__":
    main()
