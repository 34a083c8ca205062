#!/usr/bin/env python3
"""Records golden trajectories of pomdp-baselines' meta-RL toys (Wind, Point Robot) for the C++ replay tests.

Usage:  python -m scripts.record_pomdp_baselines --pomdp-baselines PATH --shm PATH
  --pomdp-baselines: a checkout of twni2016/pomdp-baselines (the original variants);
  --shm: the pomdp-baselines folder of a checkout of thaihungle/SHM (the SHM paper's modified copy: its
         envs/meta/toy_navigation and configs/meta/{wind,point_robot}_50_150).
The commits are read from a COMMIT file in a checkout (or its parent folder) when there is one. Recorded from
pomdp-baselines 28cb5dda93d8182fbe3e3055b39f839b1274aa94 and SHM 651f9e27e0fd3a3ec46a0f45b84e0128c5f8a312 (its
pomdp-baselines folder as of ffd1326319a9eb4df53e851c5e9b5c52e9cafe12), with numpy 2.4.6 and gym 0.26.2.
Needs numpy, gym and matplotlib (the env modules import them; the envs are built directly, not through gym.make).
Nothing of the checkouts is edited or copied; they are only run.
Writes tests/data/pomdp_baselines/meta_toys_golden.json.

The envs are built as the learner builds them (policies/learner.py, envs/meta/make_env.py):
  np.random.seed(config seed)  (utils/system.reproduce), then the class with the kwargs that envs/meta/__init__.py
  registers for the id, updated with n_tasks = config num_tasks (what gym.make does), wrapped in VariBadWrapper
  (episodes_per_task = config max_rollouts_per_task), then np.random.permutation(get_all_task_idx()) splits the tasks
  into train = perm[:num_train_tasks] and eval = perm[-num_eval_tasks:].
Per variant the file holds the config values, the env's tasks (winds or goals) and the permutation, and trajectories:
  task, policy, actions (float32 values fed to the wrapper, as the learner's ptu.get_numpy gives them), obs
  (obs[0] = the wrapper's reset obs, then one per step, float64 as the env returns them), reward, done (the
  wrapper's done), done_mdp (info), goal (unwrapped.is_goal_state() right after the wrapper's step: what the learner's
  success rate and replay terminal flag read) and start_state ({step: obs} where the wrapper reset the inner episode
  mid-task, info["start_state"]).
Policies (each maps the obs the agent is given to an action; values rounded to 4 decimals so the JSON text parses to
the same float32 in C++): random U(-1, 1); straight (towards the goal as fast as the action bound allows, then
hovering: for Wind it cancels the wind); away (straight's action negated and scaled by 2.5, so the actions lie outside
[-1, 1] and the wrapper's clip matters). Under k = 2 the policy acts on the obs it is given, so the first action of
the second inner episode is chosen from the terminal obs and applied to the fresh start state (VariBadWrapper.step in
twni2016/pomdp-baselines@28cb5dd:envs/meta/wrappers.py resets it; policies/learner.py ignores info["start_state"]).
"""
import argparse
import importlib.util
import json
import os
import re

os.environ.setdefault("MPLBACKEND", "Agg")
import gym  # noqa: E402
import gym.envs.registration  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "pomdp_baselines", "meta_toys_golden.json")

# (key, checkout, env id, config file, class module, class name)
VARIANTS = [
    ("wind_original", "pomdp_baselines", "Wind-v0", "configs/meta/wind/rnn.yml", "wind", "WindEnv"),
    ("wind_shm", "shm", "Wind-v0", "configs/meta/wind_50_150/shm.yml", "wind", "WindEnv"),
    ("point_robot_original", "pomdp_baselines", "PointRobotSparse-v0", "configs/meta/point_robot/rnn.yml",
     "point_robot", "SparsePointEnv"),
    ("point_robot_shm", "shm", "PointRobotSparse-v0", "configs/meta/point_robot_50_150/shm.yml", "point_robot",
     "SparsePointEnv"),
]


def load_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def registered_kwargs(checkout, env_id):
    """The kwargs envs/meta/__init__.py registers for env_id (run with gym's register() swapped for a collector)."""
    found = {}
    original = gym.envs.registration.register

    def collect(id, entry_point=None, kwargs=None, **_):
        found[id] = dict(kwargs or {})

    gym.envs.registration.register = collect
    try:
        with open(os.path.join(checkout, "envs", "meta", "__init__.py")) as f:
            exec(compile(f.read(), "envs/meta/__init__.py", "exec"), {"__name__": "recorded_meta_init"})
    finally:
        gym.envs.registration.register = original
    return found[env_id]


def read_config(path):
    """The few scalar keys of a pomdp-baselines YAML config the env construction reads."""
    keys = ("seed", "env_name", "max_rollouts_per_task", "num_tasks", "num_train_tasks", "num_eval_tasks")
    config = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"\s*(\w+):\s*([^\s#]+)", line)
            if m and m.group(1) in keys and m.group(1) not in config:
                value = m.group(2)
                config[m.group(1)] = value if m.group(1) == "env_name" else int(value)
    return config


def q(x):
    """A policy action value: rounded to 4 decimals, as float32 (the JSON text then parses to the same float32)."""
    return np.float32(round(float(x), 4))


def policy_action(name, rng, obs, target, drift):
    """The action for `obs` (the agent's obs, without the done_mdp flag). target: the goal; drift: the known wind."""
    if name == "random":
        return np.array([q(v) for v in rng.uniform(-1.0, 1.0, size=2)], dtype=np.float32)
    toward = np.clip((np.asarray(target) - obs[:2] - np.asarray(drift)) / 0.1, -1.0, 1.0)
    if name == "straight":
        return np.array([q(v) for v in toward], dtype=np.float32)
    assert name == "away"
    return np.array([q(-2.5 * v if abs(v) > 1e-3 else 2.5) for v in toward], dtype=np.float32)


def record_trajectory(wrapper, env, kind, task, policy, seed):
    np.random.seed(seed)  # Point Robot draws its start states from numpy's global generator
    rng = np.random.RandomState(10_000 + seed)
    obs = wrapper.reset(task=task)
    if kind == "wind":
        target, drift = [0.0, 1.0], list(env.winds[task])
    else:
        target, drift = list(env.goals[task]), [0.0, 0.0]
    traj = {"task": int(task), "policy": policy, "actions": [], "obs": [[float(v) for v in obs]], "reward": [],
            "done": [], "done_mdp": [], "goal": [], "start_state": {}}
    done, step = False, 0
    while not done:
        action = policy_action(policy, rng, obs, target, drift)
        obs, reward, done, info = wrapper.step(action)
        step += 1
        if kind == "point_robot":
            assert info["sparse_reward"] == reward
        traj["actions"].append([float(v) for v in action])
        traj["obs"].append([float(v) for v in obs])
        traj["reward"].append(float(reward))
        traj["done"].append(int(done))
        traj["done_mdp"].append(int(info["done_mdp"]))
        traj["goal"].append(int(env.is_goal_state()))
        if "start_state" in info:
            traj["start_state"][str(step)] = [float(v) for v in info["start_state"]]
    return traj


def record_variant(key, checkout, env_id, config_file, module_name, class_name):
    kind = "wind" if module_name == "wind" else "point_robot"
    module = load_module(f"{key}_{module_name}", os.path.join(checkout, "envs", "meta", "toy_navigation",
                                                             module_name + ".py"))
    wrappers = load_module(f"{key}_wrappers", os.path.join(checkout, "envs", "meta", "wrappers.py"))
    config = read_config(os.path.join(checkout, config_file))
    assert config["env_name"] == env_id, (config, env_id)
    kwargs = registered_kwargs(checkout, env_id)
    kwargs["n_tasks"] = config["num_tasks"]  # gym.make(env_id, n_tasks=num_tasks) updates the registered kwargs

    np.random.seed(config["seed"])  # utils/system.reproduce(seed)
    env = getattr(module, class_name)(**kwargs)
    wrapper = wrappers.VariBadWrapper(env=env, episodes_per_task=config["max_rollouts_per_task"])
    perm = [int(i) for i in np.random.permutation(env.get_all_task_idx())]
    train = perm[: config["num_train_tasks"]]
    evals = perm[-config["num_eval_tasks"]:]
    tasks = env.winds if kind == "wind" else env.goals
    out = {
        "config": config,
        "registered_kwargs": kwargs,
        "max_episode_steps": int(env._max_episode_steps),
        "goal_radius": float(env.goal_radius),
        "horizon_bamdp": int(wrapper.horizon_bamdp),
        "tasks": [[float(v) for v in t] for t in tasks],
        "task_permutation": perm,
        "trajectories": [],
    }
    plan = [("random", train[0]), ("straight", evals[0]), ("away", train[1])]
    for seed, (policy, task) in enumerate(plan):
        out["trajectories"].append(record_trajectory(wrapper, env, kind, task, policy, seed))
    return out


def checkout_commit(path):
    """The commit a checkout was taken at, from a COMMIT file in it or its parent folder (tarball checkouts)."""
    for folder in (path, os.path.dirname(path)):
        commit_file = os.path.join(folder, "COMMIT")
        if os.path.isfile(commit_file):
            with open(commit_file) as f:
                return f.read().strip()
    return "unknown"


def dump(obj, indent=0):
    """JSON with dicts broken over lines and every list on one line (small and still diffable)."""
    if isinstance(obj, dict):
        pad = " " * (indent + 1)
        items = [f"{pad}{json.dumps(k)}: {dump(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}" if items else "{}"
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        pad = " " * (indent + 1)
        return "[\n" + ",\n".join(pad + dump(v, indent + 1) for v in obj) + "\n" + " " * indent + "]"
    return json.dumps(obj, separators=(",", ":"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pomdp-baselines", required=True, help="path to a twni2016/pomdp-baselines checkout")
    parser.add_argument("--shm", required=True, help="path to the pomdp-baselines folder of a thaihungle/SHM checkout")
    args = parser.parse_args()
    checkouts = {"pomdp_baselines": os.path.abspath(args.pomdp_baselines), "shm": os.path.abspath(args.shm)}
    out = {"numpy": np.__version__, "gym": gym.__version__,
           "commits": {name: checkout_commit(path) for name, path in checkouts.items()}}
    for key, checkout, env_id, config_file, module_name, class_name in VARIANTS:
        out[key] = record_variant(key, checkouts[checkout], env_id, config_file, module_name, class_name)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(dump(out) + "\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
