"""The golden trajectories of tests/data, recorded from the reference code, replayed through the Python API: each
episode starts from the reference's recorded state (the envs' golden-replay hook, as the C++ golden tests use it),
then every step goes through RlmEnv.step and its observation, reward and flags are compared with the recording.
POPGym (popgym 1.0.7, every family and level; floats within 1e-5, recorded draws injected where steps draw),
Memory-RL (T-maze, Visual Match, Key-to-Door; exact) and pomdp-baselines' meta-RL toys (Wind, Point Robot, original
and SHM; exact). The Box2D tasks have no trajectories to replay (pybox2d's Box2D 2.3 and our 2.4.1 part at contacts):
test_box2d_stats.py compares their statistics through Python with the recorded Gymnasium ones."""

import base64
import json
import os
from pathlib import Path

import numpy as np
import pytest
from gymnasium import spaces

from rlm_envs import RlmEnv

DATA = Path(os.environ.get("RLM_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "tests/data"
POPGYM = sorted(p for p in (DATA / "popgym").glob("*.json") if p.name != "sampling_stats.json")
MEMORY_RL = sorted(p for p in (DATA / "memory_rl").glob("*.json") if p.name != "pycolab_sampling.json")


def flat(obs):
    """An observation in rlm's raw layout (float32 values, parts side by side)."""
    if isinstance(obs, tuple):
        return np.concatenate([flat(part) for part in obs])
    return np.asarray(obs, dtype=np.float32).ravel()


def api_action(space, raw):
    """A recorded raw action as the value the Gymnasium space takes."""
    raw = np.atleast_1d(np.asarray(raw, dtype=np.float32))
    if isinstance(space, spaces.Discrete):
        return int(raw[0])
    if isinstance(space, spaces.MultiDiscrete):
        return raw.astype(np.int64)
    return raw.reshape(space.shape)


def replay(env, episode, decode, tolerance, flags):
    """Steps `env` through the recorded episode from its recorded start; `flags(episode, t)` gives (terminated,
    truncated, success or None)."""
    core = env._env  # the C++ env under the Gymnasium class: the golden-replay hook is a test hook, not API
    core.restore_golden(json.dumps(episode["initial_state"]))
    np.testing.assert_allclose(flat(core.obs()), decode(episode["obs"][0]), atol=tolerance, rtol=0)
    for t, raw in enumerate(episode["actions"]):
        if "draws" in episode:
            core.inject_draws(episode["draws"][t])
        obs, reward, terminated, truncated, info = env.step(api_action(env.action_space, raw))
        where = f"step {t + 1}"
        np.testing.assert_allclose(flat(obs), decode(episode["obs"][t + 1]), atol=tolerance, rtol=0, err_msg=where)
        # Rewards are float32 in rlm (C++ compares them as floats): the recorded value rounded to float32.
        assert abs(np.float32(reward) - np.float32(episode["rewards"][t])) <= tolerance, where
        want_terminated, want_truncated, want_success = flags(episode, t)
        assert (terminated, truncated) == (want_terminated, want_truncated), where
        if want_success is not None and (terminated or truncated):
            assert info["success"] == want_success, where


@pytest.mark.parametrize("path", POPGYM, ids=[p.stem for p in POPGYM])
def test_popgym_golden_replays_through_python(path):
    data = json.loads(path.read_text())
    assert len(data["episodes"]) >= 3
    for episode in data["episodes"]:
        env = RlmEnv(data["canonical_id"])
        replay(
            env,
            episode,
            lambda obs: np.asarray(obs, dtype=np.float32),
            1e-5,
            lambda ep, t: (ep["terminated"][t], ep["truncated"][t], None),
        )


def pycolab_obs(text):
    return np.frombuffer(base64.b64decode(text), dtype=np.uint8).astype(np.float32)


@pytest.mark.parametrize("path", MEMORY_RL, ids=[p.stem for p in MEMORY_RL])
def test_memory_rl_golden_replays_through_python(path):
    data = json.loads(path.read_text())
    pycolab = "done" in data["episodes"][0]
    for episode in data["episodes"]:
        env = RlmEnv(data["canonical_id"], **data["options"])
        if pycolab:  # Visual Match, Key-to-Door: 5x5 RGB frames, the reference's done is our terminated
            replay(env, episode, pycolab_obs, 0, lambda ep, t: (ep["done"][t], False, ep["success"][t]))
        else:
            replay(
                env,
                episode,
                lambda obs: np.asarray(obs, dtype=np.float32),
                0,
                lambda ep, t: (ep["terminated"][t], ep["truncated"][t], ep["success"][t]),
            )


@pytest.mark.parametrize("variant", ["original", "shm"])
@pytest.mark.parametrize("toy", ["wind", "point_robot"])
def test_meta_toys_golden_replays_through_python(toy, variant):
    """pomdp-baselines' and SHM's Wind and Point Robot, recorded in their VariBadWrapper
    (scripts/record_pomdp_baselines.py): the obs (our float32 rounding of the reference's float64 state), rewards,
    time-outs, goal states and success, exactly. Point Robot's recording gives the task and both inner episodes'
    start states; its obs ends with done_mdp, which marks the inner episodes' boundary."""
    data = json.loads((DATA / "pomdp_baselines/meta_toys_golden.json").read_text())[f"{toy}_{variant}"]
    assert len(data["trajectories"]) >= 3
    for episode in data["trajectories"]:
        env = RlmEnv("meta/Wind" if toy == "wind" else "meta/PointRobot", variant=variant)
        start = {"task": episode["task"]}
        if toy == "point_robot":
            ((_, second_start),) = episode["start_state"].items()
            start.update(start=episode["obs"][0][:2], second_start=second_start)
        env._env.restore_golden(json.dumps(start))
        np.testing.assert_array_equal(env._env.obs(), np.float32(episode["obs"][0]))
        reached = False
        for t, action in enumerate(episode["actions"]):
            obs, reward, terminated, truncated, info = env.step(np.float32(action))
            where = f"{episode['policy']} policy, task {episode['task']}, step {t + 1}"
            np.testing.assert_array_equal(obs, np.float32(episode["obs"][t + 1]), err_msg=where)
            assert np.float32(reward) == np.float32(episode["reward"][t]), where
            assert (terminated, truncated) == (False, episode["done"][t] == 1), where
            assert info["task"] == episode["task"], where
            assert info["goal_state"] == (episode["goal"][t] == 1), where
            reached = reached or info["goal_state"]
        assert truncated and info["success"] == reached


@pytest.mark.parametrize(
    ("env_id", "record", "options", "split"),
    [
        ("meta/Wind", "shm_wind_200", {}, "split_50_150"),
        ("meta/Wind", "shm_wind_200", {"train_tasks": 10}, "split_10_190"),
        ("meta/Wind", "pomdp_baselines_wind_60", {"variant": "original"}, "split_40_20"),
        ("meta/PointRobot", "shm_point_robot_sparse_200", {}, "split_50_150"),
        ("meta/PointRobot", "shm_point_robot_sparse_200", {"train_tasks": 10}, "split_10_190"),
    ],
)
def test_meta_task_splits_through_python(env_id, record, options, split):
    """The task lists and the learner's train/eval splits (tests/data/pomdp_baselines/meta_tasks_golden.json, the
    reference's np.random.seed(1337) stream): pinning split task k plays task split[k]. For Wind, one step of the null
    action (VariBadWrapper maps 0 to the middle of the env's Box, 0.0) moves the point from (0, 0) by the task's
    wind alone, so the obs is that wind, rounded to float32."""
    data = json.loads((DATA / "pomdp_baselines/meta_tasks_golden.json").read_text())[record]
    for which in ("train", "eval"):
        env = RlmEnv(env_id, task_split=which, **options)
        tasks = data[split][which]
        assert env._env.split_size == len(tasks)
        for k, task in enumerate(tasks):
            env.pin_task(k)
            env.reset(seed=k)
            obs, _, _, _, info = env.step(np.zeros(2, dtype=np.float32))
            assert info["task"] == task, f"{which} split, task {k}"
            if env_id == "meta/Wind":
                np.testing.assert_array_equal(obs, np.float32(data["winds"][task]), err_msg=f"task {task}")
