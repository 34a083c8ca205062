#!/usr/bin/env python3
"""Records golden trajectories of popgym envs seen through popgym's own wrappers, for the C++ wrapper tests.

Run in the project venv:  .venv/bin/python -m scripts.record_popgym_wrapped
Writes tests/data/popgym/wrapped/<Family><Level>.json for the envs in WRAPPED below, each seen as
    Markovian(Antialias(PreviousAction(env)), FULL_AND_PARTIAL)
i.e. our make_env(id, {previous_action, antialias, markovian = "full_and_partial"}). Per episode, besides what
scripts/record_popgym.py stores (seed, policy, initial_state, actions, rewards, terminated, truncated):
  obs       the wrapped obs in the C++ raw layout: Dict {"obs", "state"} in its (sorted) key order, each part flat;
  flat_obs  gymnasium.spaces.utils.flatten of that obs (one-hot for every discrete part), which our Flatten wrapper
            must produce. popgym's own Flatten wrapper leaves a non-Tuple/Dict obs alone, so the full-state-only
            level is checked in C++ against the "state" part of these recordings instead.
Random episodes are cut after RANDOM_STEPS steps to keep the files small (the state is the whole grid); scripted
episodes run to the end.
"""
import json
import os
import sys
import warnings

import gymnasium as gym
import numpy as np
from popgym.core.observability import Observability
from popgym.envs.labyrinth_escape import LabyrinthEscapeEasy
from popgym.envs.labyrinth_explore import LabyrinthExploreEasy
from popgym.wrappers import Antialias, Markovian, PreviousAction

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from record_popgym import family_module, random_policy, raw  # noqa: E402

WRAPPED = {"LabyrinthEscapeEasy": LabyrinthEscapeEasy, "LabyrinthExploreEasy": LabyrinthExploreEasy}
SEEDS = (0, 1)
RANDOM_STEPS = 40


def raw_any(space, x):
    if isinstance(space, gym.spaces.Dict):
        return [v for key, s in space.spaces.items() for v in raw_any(s, x[key])]
    if isinstance(space, gym.spaces.Tuple):
        return [v for s, part in zip(space.spaces, x) for v in raw_any(s, part)]
    return raw(space, x)


def flat(space, obs):
    """gymnasium's flatten, integers written as such (every part here is discrete, so it is all 0s and 1s)."""
    return [int(v) if float(v).is_integer() else float(v) for v in gym.spaces.utils.flatten(space, obs)]


def record(wrapped, module, seed, policy_name, policy, max_steps):
    base = wrapped.unwrapped
    obs, _ = wrapped.reset(seed=seed)
    space = wrapped.observation_space
    ep = {"seed": seed, "policy": policy_name, "initial_state": module.hidden_state(base), "actions": [],
          "obs": [raw_any(space, obs)], "flat_obs": [flat(space, obs)],
          "rewards": [], "terminated": [], "truncated": []}
    rng = np.random.default_rng(seed + 1000)
    for t in range(max_steps):
        action = policy(base, obs, t, rng)
        obs, reward, terminated, truncated, _ = wrapped.step(action)
        ep["actions"].append(raw(wrapped.action_space, action))
        ep["obs"].append(raw_any(space, obs))
        ep["flat_obs"].append(flat(space, obs))
        ep["rewards"].append(float(reward))
        ep["terminated"].append(bool(terminated))
        ep["truncated"].append(bool(truncated))
        if terminated or truncated:
            break
    return ep


def main():
    warnings.simplefilter("ignore", DeprecationWarning)
    out_dir = os.path.join(ROOT, "tests", "data", "popgym", "wrapped")
    os.makedirs(out_dir, exist_ok=True)
    for name, cls in WRAPPED.items():
        family = name[: -len("Easy")]
        module = family_module(family)
        wrapped = Markovian(Antialias(PreviousAction(cls())), Observability.FULL_AND_PARTIAL)
        episodes = [record(wrapped, module, s, "random", random_policy(wrapped), RANDOM_STEPS) for s in SEEDS]
        for policy_name, policy in module.scripted_policies().items():
            if policy_name != "stay":  # standing still for 1023 steps says nothing new about the wrappers
                episodes.append(record(wrapped, module, SEEDS[0], policy_name, policy, 100000))
        data = {"canonical_id": f"popgym/{name}", "popgym_version": "1.0.7",
                "wrappers": "Markovian(Antialias(PreviousAction(env)), FULL_AND_PARTIAL)", "episodes": episodes}
        path = os.path.join(out_dir, f"{name}.json")
        with open(path + ".tmp", "w") as f:
            json.dump(data, f, separators=(",", ":"))
        os.replace(path + ".tmp", path)
        steps = sum(len(e["actions"]) for e in episodes)
        print(f"{name}: {len(episodes)} episodes, {steps} steps -> {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
