#!/usr/bin/env python3
"""Records popgym's get_state() along golden trajectories, for the C++ write_state() tests.

Run in the project venv:  .venv/bin/python -m scripts.record_popgym_states --only FAMILY [FAMILY ...]
Writes tests/data/popgym/states/<Family><Level>.json. Per episode (random actions, seeds 0 and 1, plus the family's
first scripted policy with seed 0): seed, policy, initial_state (as in scripts/record_popgym.py, so the C++ env can
restore it), actions, and states: get_state() right after reset and after every step, in the C++ raw layout
(MultiBinary like MultiDiscrete([2] * n)). Only for envs whose steps draw no randomness (nothing is injected).
"""
import argparse
import json
import os
import sys

import gymnasium as gym
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import record_popgym  # noqa: E402  (raw(), family_module(), random_policy(); also registers popgym's ids)

ROOT = record_popgym.ROOT


def raw_state(space, x):
    if isinstance(space, gym.spaces.MultiBinary):
        return [int(v) for v in np.asarray(x).ravel()]
    if isinstance(space, gym.spaces.Tuple):
        return [v for s, part in zip(space.spaces, x) for v in raw_state(s, part)]
    return record_popgym.raw(space, x)


def record_episode(env, module, seed, policy_name, policy):
    base = env.unwrapped
    obs, _ = env.reset(seed=seed)
    episode = {"seed": seed, "policy": policy_name, "initial_state": module.hidden_state(base), "actions": [],
               "states": [raw_state(base.state_space, base.get_state())]}
    rng = np.random.default_rng(seed + 1000)
    for t in range(100000):
        action = policy(base, obs, t, rng)
        obs, _, terminated, truncated, _ = env.step(action)
        episode["actions"].append(record_popgym.raw(env.action_space, action))
        episode["states"].append(raw_state(base.state_space, base.get_state()))
        if terminated or truncated:
            break
    return episode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="+", required=True, help="families, e.g. RepeatFirst Autoencode")
    args = parser.parse_args()
    out_dir = os.path.join(ROOT, "tests", "data", "popgym", "states")
    os.makedirs(out_dir, exist_ok=True)
    for family in args.only:
        module = record_popgym.family_module(family)
        for level in record_popgym.LEVELS:
            gym_id = f"popgym-{family}{level}-v0"
            env = gym.make(gym_id, disable_env_checker=True)
            episodes = [record_episode(env, module, s, "random", record_popgym.random_policy(env)) for s in (0, 1)]
            scripted = getattr(module, "scripted_policies", lambda: {})()
            for name, policy in list(scripted.items())[:1]:
                episodes.append(record_episode(env, module, 0, name, policy))
            data = {"id": gym_id, "canonical_id": f"popgym/{family}{level}", "popgym_version": "1.0.7",
                    "episodes": episodes}
            path = os.path.join(out_dir, f"{family}{level}.json")
            with open(path + ".tmp", "w") as f:
                json.dump(data, f, separators=(",", ":"))
            os.replace(path + ".tmp", path)
            print(f"{gym_id}: {len(episodes)} episodes -> {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
