#!/usr/bin/env python3
"""Records reference statistics of Gymnasium's own Box2D tasks (pybox2d, Box2D 2.3) for our Box2D 2.4.1 ports.

Run with a Python that has gymnasium[box2d] (not the project venv, which CI builds), e.g.:
    python3 -m venv ~/gym-box2d-venv
    ~/gym-box2d-venv/bin/pip install "gymnasium[box2d]"  # pybox2d's wheel box2d==2.3.10 (swig: from source)
    ~/gym-box2d-venv/bin/python -m scripts.record_gymnasium_box2d [--n 1000] [--only SUBSTRING]
        [--check-episodes 20] [--out tests/data/box2d/gymnasium_reference.json]
About 5 minutes on one core at n = 1000 (the walker cells take most of it).

Writes tests/data/box2d/gymnasium_reference.json, read by tests/box2d/test_gymnasium_reference.cpp. Our envs and
Gymnasium's cannot share trajectories (pybox2d wraps Box2D 2.3, we build on 2.4.1, whose joint-limit solver and
edge-polygon collision differ, and each side draws from its own RNG: numpy PCG64 here, the framework Rng there), so
what is recorded is distributional. For each cell of CELLS below (env x policy), over the env seeds 0..n-1:
  - the episode return: mean, sd (population), standard error sd/sqrt(n), and every return (for distribution tests);
  - the episode length: mean and sd;
  - LunarLander only: the agent step on which a leg first touches the ground (first_contact, -1 if never), its rate,
    and its mean and sd over the episodes that touch: the end of the free flight, before any contact dynamics;
  - the success rate (lander: came to rest, +100; walker: passed the end of the course) and the rate of every
    terminal cause: lander landed / crashed (body contact) / out_of_bounds (|x| >= 1) / truncated (time limit);
    walker finished / fell (hull contact) / out_of_bounds (x < 0) / truncated;
and, per env configuration, the reset observation over the same seeds: per-element mean, sd, min, max and the 5%
and 95% quantiles.

Episode protocol: env = gymnasium.make(id, **kwargs) (with its TimeLimit), reset(seed=s), then the policy until
terminated or truncated. Policies:
  - heuristic: Gymnasium's controllers (Farama-Foundation/Gymnasium@3f0476a:gymnasium/envs/box2d/, heuristic in
    lunar_lander.py, BipedalWalkerHeuristics in bipedal_walker.py), rewritten in double precision in
    scripts/box2d_heuristics.py (as tests/box2d/*_policies.hpp are); the walker gets a zero action on its first
    step and the heuristic from the second step on (Gymnasium's demo loop). The first --check-episodes episodes of
    every heuristic cell also run Gymnasium's own controllers (lunar_lander.heuristic,
    bipedal_walker.BipedalWalkerHeuristics) beside ours on the same observations and record how far their actions
    differ ("heuristic_check"): the reference rollouts are driven by our copy of the controller, and the check shows
    that it acts as Gymnasium's.
  - random: uniform valid actions (Discrete(4) uniform; Box uniform on [-1, 1]^d) from numpy's default_rng seeded
    with 1_000_000 + s for episode s (the policy's own stream, separate from the env's).
Terminal causes are read from the env after the terminal step: game_over set -> crashed / fell; otherwise a -100
reward -> out of bounds; otherwise lander landed (+100) / walker finished. Truncated counts only episodes cut by the
time limit without terminating.
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import sys
import time

import gymnasium as gym
import numpy as np
from gymnasium.envs.box2d import bipedal_walker as gym_walker  # only run: Gymnasium's own controllers, for the check
from gymnasium.envs.box2d import lunar_lander as gym_lander

from scripts.box2d_heuristics import WalkerHeuristic, lander_heuristic

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "data", "box2d", "gymnasium_reference.json")
POLICY_SEED_BASE = 1_000_000

# Cells (name -> Gymnasium id, constructor kwargs, policy). The name is what the C++ test looks up.
CELLS = {
    "lunar_lander_discrete_heuristic": ("LunarLander-v3", {}, "heuristic"),
    "lunar_lander_continuous_heuristic": ("LunarLanderContinuous-v3", {}, "heuristic"),
    "lunar_lander_discrete_random": ("LunarLander-v3", {}, "random"),
    "lunar_lander_continuous_random": ("LunarLanderContinuous-v3", {}, "random"),
    "lunar_lander_discrete_wind_heuristic": ("LunarLander-v3", {"enable_wind": True}, "heuristic"),
    "lunar_lander_continuous_wind_heuristic": ("LunarLanderContinuous-v3", {"enable_wind": True}, "heuristic"),
    "bipedal_walker_heuristic": ("BipedalWalker-v3", {}, "heuristic"),
    "bipedal_walker_hardcore_heuristic": ("BipedalWalkerHardcore-v3", {}, "heuristic"),
    "bipedal_walker_random": ("BipedalWalker-v3", {}, "random"),
    "bipedal_walker_hardcore_random": ("BipedalWalkerHardcore-v3", {}, "random"),
}
# Reset-observation statistics, per env configuration (the continuous lander resets as the discrete one does: the
# reset step takes the null action either way).
RESETS = {
    "lunar_lander": ("LunarLander-v3", {}),
    "lunar_lander_wind": ("LunarLander-v3", {"enable_wind": True}),
    "bipedal_walker": ("BipedalWalker-v3", {}),
    "bipedal_walker_hardcore": ("BipedalWalkerHardcore-v3", {}),
}
LANDER_CAUSES = ("landed", "crashed", "out_of_bounds", "truncated")
WALKER_CAUSES = ("finished", "fell", "out_of_bounds", "truncated")


# ---- episodes ----
def terminal_cause(walker, env, reward, terminated, truncated):
    if not terminated:
        return "truncated" if truncated else None
    if env.unwrapped.game_over:
        return "fell" if walker else "crashed"
    if reward == -100:
        return "out_of_bounds"
    return "finished" if walker else "landed"


class HeuristicCheck:
    """Gymnasium's own controller stepped beside ours on the same observations: action differences."""

    def __init__(self):
        self.steps, self.max_abs_diff, self.discrete_mismatches = 0, 0.0, 0

    def add(self, ours, theirs, discrete):
        self.steps += 1
        if discrete:
            self.discrete_mismatches += int(int(ours) != int(theirs))
        else:
            d = float(np.max(np.abs(np.asarray(ours, dtype=np.float64) - np.asarray(theirs, dtype=np.float64))))
            self.max_abs_diff = max(self.max_abs_diff, d)

    def as_json(self, episodes):
        return {"episodes": episodes, "steps": self.steps, "max_abs_action_diff": self.max_abs_diff,
                "discrete_mismatches": self.discrete_mismatches}


def run_episode(env, seed, policy, check):
    walker = "BipedalWalker" in env.spec.id
    continuous = walker or env.unwrapped.continuous
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(POLICY_SEED_BASE + seed)
    heuristic = WalkerHeuristic() if walker else None
    gym_heuristic = gym_walker.BipedalWalkerHeuristics() if (walker and check) else None
    total, length, first, first_contact = 0.0, 0, True, -1
    while True:
        if policy == "random":
            if continuous:
                action = rng.uniform(-1.0, 1.0, size=env.action_space.shape[0])
            else:
                action = int(rng.integers(4))
        elif walker:
            # Gymnasium's demo loop: zero action on the first step, the heuristic from the second step on.
            action = np.zeros(4) if first else heuristic.act(obs)
            if check is not None and not first:
                check.add(action, gym_heuristic.step_heuristic(obs), discrete=False)
        else:
            action = lander_heuristic(obs, continuous)
            if check is not None:
                check.add(action, gym_lander.heuristic(env, obs), discrete=not continuous)
        first = False
        obs, reward, terminated, truncated, _ = env.step(action)
        total += float(reward)
        length += 1
        if not walker and first_contact < 0 and (obs[6] != 0 or obs[7] != 0):
            first_contact = length
        if terminated or truncated:
            return total, length, first_contact, terminal_cause(walker, env, reward, terminated, truncated)


def summarize(values):
    a = np.asarray(values, dtype=np.float64)
    sd = float(a.std())
    return float(a.mean()), sd, sd / math.sqrt(len(a))


def record_cell(name, env_id, kwargs, policy, seeds, check_episodes):
    walker = env_id.startswith("BipedalWalker")
    causes = WALKER_CAUSES if walker else LANDER_CAUSES
    env = gym.make(env_id, **kwargs)
    returns, lengths, contacts, counts = [], [], [], {c: 0 for c in causes}
    check = HeuristicCheck() if policy == "heuristic" else None
    start = time.perf_counter()
    for i, seed in enumerate(seeds):
        ret, length, contact, cause = run_episode(env, seed, policy, check if (check and i < check_episodes) else None)
        returns.append(ret)
        lengths.append(length)
        contacts.append(contact)
        counts[cause] += 1
    seconds = time.perf_counter() - start
    env.close()
    n = len(seeds)
    mean, sd, se = summarize(returns)
    length_mean, length_sd, _ = summarize(lengths)
    success = "finished" if walker else "landed"
    cell = {
        "env_id": env_id, "kwargs": kwargs, "policy": policy, "n": n,
        "return_mean": mean, "return_sd": sd, "return_se": se,
        "length_mean": length_mean, "length_sd": length_sd,
        "success_rate": counts[success] / n,
        "end_rates": {c: counts[c] / n for c in causes},
        "seconds": seconds, "steps_per_second": float(np.sum(lengths)) / seconds,
        "returns": [round(r, 4) for r in returns],
        "lengths": lengths,
    }
    if not walker:
        touched = [c for c in contacts if c > 0]
        cell["first_contact"] = contacts
        cell["first_contact_rate"] = len(touched) / n
        cell["first_contact_mean"], cell["first_contact_sd"], _ = summarize(touched) if touched else (0.0, 0.0, 0.0)
    if check is not None:
        cell["heuristic_check"] = check.as_json(min(check_episodes, n))
    rates = " ".join(f"{c} {cell['end_rates'][c]:.3f}" for c in causes)
    print(f"{name:<40} mean {mean:8.2f} sd {sd:7.2f} se {se:5.2f} length {length_mean:6.1f}  {rates}  "
          f"({seconds:.0f} s)", flush=True)
    if check is not None:
        print(f"{'':<40} Gymnasium's own controller: {cell['heuristic_check']}", flush=True)
    return cell


def record_reset(env_id, kwargs, seeds):
    env = gym.make(env_id, **kwargs)
    obs = np.array([env.reset(seed=s)[0] for s in seeds], dtype=np.float64)
    env.close()
    return {"env_id": env_id, "kwargs": kwargs, "n": len(seeds),
            "mean": obs.mean(axis=0).tolist(), "sd": obs.std(axis=0).tolist(),
            "min": obs.min(axis=0).tolist(), "max": obs.max(axis=0).tolist(),
            "q05": np.quantile(obs, 0.05, axis=0).tolist(), "q95": np.quantile(obs, 0.95, axis=0).tolist()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1000, help="episodes (env seeds 0..n-1) per cell")
    parser.add_argument("--only", default="", help="record only the cells whose name contains this (no file merge)")
    parser.add_argument("--check-episodes", type=int, default=20,
                        help="episodes per heuristic cell also run through Gymnasium's own controller")
    parser.add_argument("--out", default=DEFAULT_OUT)
    args = parser.parse_args()
    if args.only and os.path.abspath(args.out) == DEFAULT_OUT:
        sys.exit("record_gymnasium_box2d: --only writes a partial file; give --out another path")
    seeds = list(range(args.n))

    cells = {}
    for name, (env_id, kwargs, policy) in CELLS.items():
        if args.only in name:
            cells[name] = record_cell(name, env_id, kwargs, policy, seeds, args.check_episodes)
    resets = {name: record_reset(env_id, kwargs, seeds) for name, (env_id, kwargs) in RESETS.items()
              if args.only in name}
    from importlib.metadata import version
    out = {
        "generator": "scripts/record_gymnasium_box2d.py",
        "date": datetime.date.today().isoformat(),
        "versions": {"gymnasium": gym.__version__, "box2d": version("box2d"), "numpy": np.__version__,
                     "python": platform.python_version()},
        "n": args.n,
        "seeds": {"env": f"reset(seed=s) for s in 0..{args.n - 1}",
                  "random_policy": f"numpy default_rng({POLICY_SEED_BASE} + s) for episode s"},
        "cells": cells,
        "reset": resets,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    text = json.dumps(out, indent=1)
    # Lists of numbers on one line each (the per-episode returns and lengths, the reset vectors).
    text = re.sub(r"\[[-0-9.eE,\s]*\]", lambda m: re.sub(r"\s+", "", m.group(0)).replace(",", ", "), text)
    with open(args.out, "w") as f:
        f.write(text + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
