#!/usr/bin/env python3
"""Records golden trajectories from Memory-RL's environments (twni2016/Memory-RL) for the C++ replay tests.

Usage:  python -m scripts.record_memory_rl --memory-rl PATH_TO_MEMORY_RL_CHECKOUT
Needs numpy, gym and matplotlib (Memory-RL's envs/tmaze.py imports them); any gym works, the env is used directly.
Writes tests/data/memory_rl/<Name>.json.

T-maze (envs/tmaze.py, TMazeClassicPassive / TMazeClassicActive with Memory-RL's config penalty -1/Lc): per episode
the goal side drawn at reset (from numpy's global generator, seeded per episode here), the actions, every obs
(obs[0] = reset obs), rewards and done flags. Policies: uniform random actions, the optimal policy, the optimal
policy with the wrong final turn, and a policy that stays put (to hit the oracle cell's one-time exposure and the
penalties).
"""
import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tmaze_policy(name, rng, env, goal_y):
    """The action at env.time_step for one of the scripted policies (goal_y is what an agent with memory knows)."""
    t, o = env.time_step, env.oracle_length
    last = env.episode_length - 1
    if name == "random":
        return int(rng.integers(4))
    if name == "stay":
        return 2  # left: into the wall at x = 0, so the agent sits on the oracle cell
    if t < o:
        return 2  # active: step back to the oracle
    if t == last:
        turn = 1 if goal_y == 1 else 3
        return turn if name == "optimal" else 4 - turn  # 1 <-> 3
    return 0


def record_tmaze(tmaze, variant, corridor_length, episodes):
    cls = tmaze.TMazeClassicPassive if variant == "Passive" else tmaze.TMazeClassicActive
    env = cls(corridor_length=corridor_length, penalty=-1.0 / corridor_length, distract_reward=0.0)
    out = []
    for seed in range(episodes):
        for policy in ("random", "optimal", "wrong_turn", "stay"):
            np.random.seed(seed)  # Memory-RL draws goal_y from numpy's global generator
            rng = np.random.default_rng(1000 + seed)
            obs = env.reset()
            goal_y = int(env.goal_y)
            ep = {"seed": seed, "policy": policy, "initial_state": {"goal_y": goal_y}, "obs": [obs.tolist()],
                  "actions": [], "rewards": [], "terminated": [], "truncated": [], "success": []}
            done = False
            while not done:
                a = tmaze_policy(policy, rng, env, goal_y)
                obs, reward, done, _ = env.step(a)
                ep["actions"].append([a])
                ep["obs"].append(obs.tolist())
                ep["rewards"].append(float(reward))
                ep["terminated"].append(bool(done))  # finite_horizon_terminal: the last step is terminal
                ep["truncated"].append(False)
                ep["success"].append(bool(done and env.y == env.goal_y))
            out.append(ep)
    return {"canonical_id": f"memory_rl/TMaze{variant}", "options": {"corridor_length": corridor_length},
            "reference": "twni2016/Memory-RL envs/tmaze.py", "episodes": out}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memory-rl", required=True, help="path to a Memory-RL checkout")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.memory_rl))
    import envs.tmaze as tmaze  # noqa: E402  (the reference checkout)

    out_dir = os.path.join(ROOT, "tests", "data", "memory_rl")
    os.makedirs(out_dir, exist_ok=True)
    for variant in ("Passive", "Active"):
        for corridor_length in (1, 4, 10):
            data = record_tmaze(tmaze, variant, corridor_length, episodes=4)
            path = os.path.join(out_dir, f"TMaze{variant}{corridor_length}.json")
            with open(path, "w") as f:
                json.dump(data, f, separators=(",", ":"))
            print(f"wrote {path}: {len(data['episodes'])} episodes")


if __name__ == "__main__":
    main()
