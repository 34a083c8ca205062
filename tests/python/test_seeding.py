"""Seeds: the same seed gives the same episodes whatever num_threads is, and the same episodes as the C++ VecEnv that
rlm's trainers step (the digests of tests/data/vec_env_digests.json, which tests/envs/test_vec_env_digests.cpp
computes from C++)."""

import json
import os
import zlib
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import rlm_envs

ROOT = Path(os.environ.get("RLM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CASES = json.loads((ROOT / "tests/data/vec_env_digests.json").read_text())


def raw_rows(batch, n):
    """A decoded batch back in rlm's raw layout: float32 rows, parts side by side."""
    parts = batch if isinstance(batch, tuple) else (batch,)
    return np.concatenate([np.asarray(p, dtype=np.float32).reshape(n, -1) for p in parts], axis=1)


def rule_actions(space, n, t):
    """The action rule of test_vec_env_digests.cpp, as values of the single action space."""
    k = 7 * np.arange(n)[:, None] + 3 * t
    if isinstance(space, gymnasium.spaces.Discrete):
        return (k[:, 0] % space.n).astype(np.int64)
    width = int(np.prod(space.shape))
    k = k + np.arange(width)[None, :]
    if isinstance(space, gymnasium.spaces.MultiDiscrete):
        return (k % space.nvec[None, :]).astype(np.int64)
    return ((k % 9 - 4).astype(np.float32) * np.float32(0.25)).reshape((n, *space.shape))


def digest(case, num_threads):
    n = case["num_envs"]
    envs = rlm_envs.make_vec(
        case["id"], num_envs=n, seed=case["seed"], num_threads=num_threads, **case["wrappers"], **case["options"]
    )
    obs, _ = envs.reset()
    crc = zlib.crc32(raw_rows(obs, n).tobytes())
    for t in range(case["steps"]):
        obs, rewards, terminated, truncated, _ = envs.step(rule_actions(envs.single_action_space, n, t))
        for values in (
            raw_rows(obs, n),
            rewards.astype(np.float32),
            terminated.astype(np.uint8),
            truncated.astype(np.uint8),
        ):
            crc = zlib.crc32(values.tobytes(), crc)
    return f"{crc:08x}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_python_plays_the_trainers_episodes(case):
    assert digest(case, num_threads=1) == case["digest"]
    assert digest(case, num_threads=3) == case["digest"]


def test_reset_with_a_seed_starts_over():
    envs = rlm_envs.make_vec("popgym/CountRecallEasy", num_envs=4, seed=0)
    first, _ = envs.reset(seed=5)
    actions = np.zeros((4,), dtype=np.int64)
    played = [envs.step(actions)[0] for _ in range(60)]
    again, _ = envs.reset(seed=5)
    np.testing.assert_equal(first, again)
    np.testing.assert_equal(played, [envs.step(actions)[0] for _ in range(60)])
    other, _ = envs.reset(seed=6)
    assert not np.array_equal(np.stack(played), np.stack([envs.step(actions)[0] for _ in range(60)]))


def test_a_single_env_plays_its_vector_slot():
    envs = rlm_envs.make_vec("memory_rl/PassiveVisualMatch", num_envs=3, seed=4)
    env = rlm_envs.RlmEnv("memory_rl/PassiveVisualMatch", env_index=2)
    obs, _ = envs.reset()
    single, _ = env.reset(seed=4)
    np.testing.assert_equal(obs[2], single)
    for t in range(400):  # several episodes: the auto-reset and reset() start the same next episode
        actions = rule_actions(envs.single_action_space, 3, t)
        obs, rewards, terminated, truncated, _ = envs.step(actions)
        single, reward, term, trunc, _ = env.step(actions[2])
        if term or trunc:
            single, _ = env.reset()
        np.testing.assert_equal(obs[2], single)
        assert (rewards[2], terminated[2], truncated[2]) == (reward, term, trunc)
