#!/usr/bin/env python3
"""Records golden trajectories from the reference package (popgym==1.0.7) for the C++ replay tests.

Run in the project venv:  .venv/bin/python -m scripts.record_popgym [--only FAMILY]
Writes tests/data/popgym/<Family><Level>.json (gzip-compressed as .json.gz when over 5 MB in all).

For every registered id it records several seeds, each one whole episode under random actions, plus episodes under
the family's scripted policies where its module defines them. Per episode:
  seed, policy, initial_state (family-specific hidden state right after reset, from scripts/popgym_golden/<family>.py),
  actions, obs (obs[0] = reset obs), rewards, terminated, truncated, and draws: every value the env drew from its
  numpy Generator during each step (a list per step), so C++ can inject the same draws (bandit payouts, noise).
Observations and actions are written in the C++ raw layout: Discrete -> [x], MultiDiscrete/Box -> flat list,
Tuple -> concatenation of its parts.
"""
import argparse
import importlib
import json
import os
import sys

import gymnasium as gym
import numpy as np
import popgym  # noqa: F401  (registers the ids)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
LEVELS = ("Easy", "Medium", "Hard")
SEEDS = (0, 1, 2)


def raw(space, x):
    """A value of `space` in the C++ raw layout (a flat list of numbers)."""
    if isinstance(space, gym.spaces.Discrete):
        return [int(x)]
    if isinstance(space, gym.spaces.MultiDiscrete):
        return [int(v) for v in np.asarray(x).ravel()]
    if isinstance(space, gym.spaces.Box):
        return [float(v) for v in np.asarray(x, dtype=np.float64).ravel()]
    if isinstance(space, gym.spaces.Tuple):
        return [v for s, part in zip(space.spaces, x) for v in raw(s, part)]
    raise TypeError(f"unsupported space {space}")


class DrawRecorder:
    """Wraps an env's numpy Generator and records every value it returns (flattened), per step."""

    def __init__(self, generator):
        self._generator = generator
        self.draws = []

    def __getattr__(self, name):
        attr = getattr(self._generator, name)
        if not callable(attr):
            return attr

        def recorded(*args, **kwargs):
            out = attr(*args, **kwargs)
            self.draws.extend(float(v) for v in np.asarray(out, dtype=np.float64).ravel())
            return out

        return recorded


def record_episode(env, module, seed, policy_name, policy):
    base = env.unwrapped
    obs, _ = env.reset(seed=seed)
    episode = {"seed": seed, "policy": policy_name, "initial_state": module.hidden_state(base),
               "actions": [], "obs": [raw(env.observation_space, obs)], "rewards": [], "terminated": [],
               "truncated": [], "draws": []}
    recorder = DrawRecorder(base.np_random)
    base._np_random = recorder  # gymnasium's np_random property reads _np_random
    rng = np.random.default_rng(seed + 1000)
    for t in range(100000):
        action = policy(base, obs, t, rng)
        recorder.draws = []
        obs, reward, terminated, truncated, _ = env.step(action)
        episode["actions"].append(raw(env.action_space, action))
        episode["obs"].append(raw(env.observation_space, obs))
        episode["rewards"].append(float(reward))
        episode["terminated"].append(bool(terminated))
        episode["truncated"].append(bool(truncated))
        episode["draws"].append(recorder.draws)
        if terminated or truncated:
            break
    base._np_random = recorder._generator
    return episode


def random_policy(env):
    def act(base, obs, t, rng):
        env.action_space.seed(int(rng.integers(2**31)))
        return env.action_space.sample()
    return act


def family_module(family):
    name = "".join("_" + c.lower() if c.isupper() else c for c in family).lstrip("_")
    return importlib.import_module(f"scripts.popgym_golden.{name}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="record only this family, e.g. RepeatFirst")
    args = parser.parse_args()
    out_dir = os.path.join(ROOT, "tests", "data", "popgym")
    os.makedirs(out_dir, exist_ok=True)
    ids = sorted(k for k in gym.registry if k.startswith("popgym-"))
    for gym_id in ids:
        name = gym_id[len("popgym-"):-len("-v0")]
        level = next(lv for lv in LEVELS if name.endswith(lv))
        family = name[: -len(level)]
        if args.only and args.only != family:
            continue
        module = family_module(family)
        env = gym.make(gym_id, disable_env_checker=True)
        episodes = [record_episode(env, module, s, "random", random_policy(env)) for s in SEEDS]
        for policy_name, policy in getattr(module, "scripted_policies", lambda: {})().items():
            episodes += [record_episode(env, module, s, policy_name, policy) for s in SEEDS[:2]]
        data = {"id": gym_id, "canonical_id": f"popgym/{name}", "popgym_version": "1.0.7", "episodes": episodes}
        path = os.path.join(out_dir, f"{name}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(data, f, separators=(",", ":"))
        os.replace(path + ".tmp", path)
        steps = sum(len(e["actions"]) for e in episodes)
        print(f"{gym_id}: {len(episodes)} episodes, {steps} steps -> {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
