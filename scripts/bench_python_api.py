#!/usr/bin/env python3
"""The Python package's speed: rlm_envs.make_vec against popgym 1.0.7 under Gymnasium's SyncVectorEnv and against the
same C++ envs stepped from C++ (rlm_env_bench), all three in one run, as ratios.

Usage: .venv/bin/python -m scripts.bench_python_api --env-bench BUILD/rlm_env_bench [--filter SUBSTRING]
           [--seconds S] [--json OUT] [--markdown OUT]      (`./rlm bench python` runs it with build/python importable)

Every side steps 64 envs of one popgym id, single-threaded, with random valid actions drawn beforehand, under POPGym's
paper wrappers (previous action, antialias, flatten), the setting of rlm_env_bench's "paper_wrappers_64envs_1thread"
column; popgym gets popgym's own wrappers. The rlm_envs column is whole batched steps through the VectorEnv (actions in,
obs, rewards, flags and infos out); "bare" is the binding's C++ step call alone on actions encoded beforehand, so
1/rlm_envs - 1/bare is the package's Python per batched step (action encoding, one copy of the obs, flags, infos).
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time

import gymnasium as gym
import popgym  # noqa: F401  (registers popgym's ids)
from gymnasium.vector import SyncVectorEnv
from popgym.wrappers import Antialias, Flatten, PreviousAction

import rlm_envs
from rlm_envs.spaces import encode_actions

NUM_ENVS = 64


def timed_loop(step, actions, seconds):
    """Batched steps per second over pre-drawn `actions`, replayed for about `seconds`."""
    steps, start = 0, time.perf_counter()
    while True:
        for a in actions:
            step(a)
        steps += len(actions)
        now = time.perf_counter()
        if now - start >= seconds:
            return steps / (now - start)


def popgym_env_steps(canonical, seconds):
    name = "popgym-" + canonical.split("/", 1)[1] + "-v0"

    def make():
        return Flatten(Antialias(PreviousAction(gym.make(name, disable_env_checker=True).unwrapped)))

    envs = SyncVectorEnv([make for _ in range(NUM_ENVS)])
    envs.reset(seed=0)
    envs.action_space.seed(0)
    actions = [envs.action_space.sample() for _ in range(64)]
    return NUM_ENVS * timed_loop(envs.step, actions, seconds)


def rlm_envs_steps(canonical, seconds):
    """(env steps/s through the VectorEnv, env steps/s of the bare C++ step call on the same actions, encoded once)."""
    envs = rlm_envs.make_vec(canonical, num_envs=NUM_ENVS, seed=0, previous_action=True, antialias=True, flatten=True)
    envs.reset()
    envs.action_space.seed(0)
    actions = [envs.action_space.sample() for _ in range(256)]
    whole = NUM_ENVS * timed_loop(envs.step, actions, seconds)
    raw = [encode_actions(envs.single_action_space, a, NUM_ENVS) for a in actions]
    bare = NUM_ENVS * timed_loop(envs._vec.step, raw, seconds)  # the binding's C++ VecEnv, GIL released
    return whole, bare


def cpp_env_steps(env_bench, ids, seconds):
    """rlm_env_bench's paper-wrapper 64-env single-thread figure for each id, from one run per id."""
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        for canonical in ids:
            out = f"{tmp}/bench.json"
            subprocess.run(
                [env_bench, "--seconds", str(seconds), "--filter", canonical, "--json", out],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            for row in json.load(open(out))["results"]:
                if row["id"] == canonical:
                    rates[canonical] = row["paper_wrappers_64envs_1thread"]
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env-bench", required=True, help="the rlm_env_bench binary")
    parser.add_argument("--filter", default="", help="only popgym ids containing this")
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    ids = [i for i in rlm_envs.env_ids() if i.startswith("popgym/") and args.filter in i]
    cpp = cpp_env_steps(args.env_bench, ids, args.seconds / 2)
    rows = []
    header = (
        f"{'id':<38} {'popgym Sync':>12} {'rlm_envs':>12} {'bare call':>12} {'C++':>12} {'vs popgym':>10} "
        f"{'vs C++':>8} {'Python us':>10}"
    )
    print(f"env steps/s, {NUM_ENVS} envs, 1 thread, paper wrappers\n{header}")
    for canonical in ids:
        ours, bare = rlm_envs_steps(canonical, args.seconds)
        ref = popgym_env_steps(canonical, args.seconds)
        python_us = 1e6 * NUM_ENVS * (1 / ours - 1 / bare)  # per batched step
        row = {
            "id": canonical,
            "popgym_sync_vector_env": ref,
            "rlm_envs": ours,
            "bare_binding_step": bare,
            "cpp_vec_env": cpp[canonical],
            "vs_popgym": ours / ref,
            "vs_cpp": ours / cpp[canonical],
            "python_us_per_batched_step": python_us,
            "batched_step_us": 1e6 * NUM_ENVS / ours,
        }
        rows.append(row)
        print(
            f"{canonical:<38} {ref:>12,.0f} {ours:>12,.0f} {bare:>12,.0f} {cpp[canonical]:>12,.0f} "
            f"{row['vs_popgym']:>9.0f}x {row['vs_cpp']:>7.2f}x {python_us:>10.1f}",
            flush=True,
        )
    summary = {
        "median_vs_popgym": statistics.median(r["vs_popgym"] for r in rows),
        "median_vs_cpp": statistics.median(r["vs_cpp"] for r in rows),
        "median_python_us_per_batched_step": statistics.median(r["python_us_per_batched_step"] for r in rows),
        "median_batched_step_us": statistics.median(r["batched_step_us"] for r in rows),
    }
    print(
        f"median: {summary['median_vs_popgym']:.0f}x popgym's SyncVectorEnv, {summary['median_vs_cpp']:.2f}x the C++ "
        f"VecEnv stepped from C++; a batched step {summary['median_batched_step_us']:.1f} us, of which "
        f"{summary['median_python_us_per_batched_step']:.1f} us the package's Python"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"num_envs": NUM_ENVS, "seconds": args.seconds, "rows": rows, "summary": summary}, f, indent=2)
    if args.markdown:
        with open(args.markdown, "w") as f:
            columns = ["id", "popgym SyncVectorEnv", "rlm_envs", "bare call", "C++ VecEnv", "vs popgym", "vs C++"]
            f.write("| " + " | ".join(columns) + " | Python µs per batched step |\n")
            f.write("|---|---|---|---|---|---|---|---|\n")
            for r in rows:
                f.write(
                    f"| {r['id']} | {r['popgym_sync_vector_env']:,.0f} | {r['rlm_envs']:,.0f} | "
                    f"{r['bare_binding_step']:,.0f} | {r['cpp_vec_env']:,.0f} | {r['vs_popgym']:.0f}x | "
                    f"{r['vs_cpp']:.2f}x | {r['python_us_per_batched_step']:.1f} |\n"
                )


if __name__ == "__main__":
    main()
