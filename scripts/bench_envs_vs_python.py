#!/usr/bin/env python3
"""Times the reference package (popgym==1.0.7) on this machine and compares it with our C++ envs.

Usage: .venv/bin/python -m scripts.bench_envs_vs_python CPP_BENCH_JSON [--seconds S] [--json OUT] [--markdown OUT]
CPP_BENCH_JSON is what `rlm_env_bench --json` wrote in the same run (./rlm bench does both). Both sides step one
environment id single-threaded with random valid actions and reset when an episode ends; the C++ figure is its
"raw_16envs_1thread" column (VecEnv API, no wrappers), the Python one a plain env.step loop on the unwrapped
registered env (no gymnasium checker wrappers). Prints steps/s for both, their ratio, the median ratio and the minimum.
Only the popgym/ ids are timed; the other suites' references are timed by scripts/bench_envs_vs_references.py.
"""
import argparse
import json
import statistics

import gymnasium as gym
import popgym  # noqa: F401

from scripts import bench_timing


def gym_id(canonical):
    return "popgym-" + canonical.split("/", 1)[1] + "-v0"


def python_steps_per_second(env_id, seconds):
    env = gym.make(env_id, disable_env_checker=True).unwrapped
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(4096)]

    def step(a):
        _, _, terminated, truncated, _ = env.step(a)
        return terminated or truncated

    return bench_timing.steps_per_second(step, env.reset, actions, seconds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cpp_json")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    cpp = {r["id"]: r for r in json.load(open(args.cpp_json))["results"]}
    rows = []
    print(f"{'id':<40} {'python steps/s':>15} {'C++ steps/s':>15} {'ratio':>8}")
    for canonical in sorted(i for i in cpp if i.startswith("popgym/")):
        py = python_steps_per_second(gym_id(canonical), args.seconds)
        ours = cpp[canonical]["raw_16envs_1thread"]
        rows.append({"id": canonical, "python": py, "cpp": ours, "ratio": ours / py})
        print(f"{canonical:<40} {py:>15,.0f} {ours:>15,.0f} {ours / py:>7.0f}x")
    if not rows:
        print("no popgym/ id in the C++ figures: nothing to compare")
        return
    ratios = [r["ratio"] for r in rows]
    summary = {"median_ratio": statistics.median(ratios), "min_ratio": min(ratios),
               "min_ratio_id": min(rows, key=lambda r: r["ratio"])["id"]}
    print(f"median ratio {summary['median_ratio']:.0f}x, "
          f"lowest {summary['min_ratio']:.0f}x ({summary['min_ratio_id']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, **summary}, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("| id | python steps/s | C++ steps/s | ratio |\n|---|---|---|---|\n")
            for r in rows:
                f.write(f"| {r['id']} | {r['python']:,.0f} | {r['cpp']:,.0f} | {r['ratio']:.0f}x |\n")
            f.write(f"\nmedian ratio {summary['median_ratio']:.0f}x, lowest {summary['min_ratio']:.0f}x "
                    f"({summary['min_ratio_id']})\n")


if __name__ == "__main__":
    main()
