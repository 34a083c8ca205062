"""Gymnasium's own checks on every id, and the VectorEnv contract (Gymnasium 1.x has no vector-env checker: the checks
below follow its SyncVectorEnv in SameStep mode, which a batch of RlmEnv must equal)."""

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import rlm_envs
from rlm_envs import RlmEnv

IDS = rlm_envs.env_ids()

# Warnings that describe the envs rather than a fault: unbounded observation Boxes (popgym's velocity-only CartPole,
# Best-Arm, the meta-RL tasks) and action bounds kept from the references (Pendulum's [-2, 2]).
EXPECTED_WARNINGS = ("infinity", "symmetric")


def checked(env_id, **kwargs):
    env = gymnasium.make(rlm_envs.gymnasium_id(env_id), **kwargs)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped, skip_render_check=True)
    unexpected = [str(w.message) for w in caught if not any(k in str(w.message) for k in EXPECTED_WARNINGS)]
    assert not unexpected, unexpected


def test_every_id_is_registered():
    assert len(IDS) >= 68
    for env_id in IDS:
        assert rlm_envs.gymnasium_id(env_id) in gymnasium.registry


@pytest.mark.parametrize("env_id", IDS)
def test_check_env(env_id):
    checked(env_id)


@pytest.mark.parametrize("env_id", ["popgym/AutoencodeEasy", "popgym/MineSweeperEasy", "memory_rl/PassiveVisualMatch"])
def test_check_env_with_the_trainers_wrappers(env_id):
    checked(env_id, previous_action=True, antialias=True, flatten=True)


def test_check_env_markovian_and_discrete_action():
    checked("popgym/BattleshipEasy", markovian="full_and_partial", discrete_action=True)


def test_spaces_follow_popgym():
    env = gymnasium.make("rlm/popgym-RepeatFirstEasy-v0")
    assert env.observation_space == gymnasium.spaces.Discrete(4)
    assert env.action_space == gymnasium.spaces.Discrete(4)
    image = gymnasium.make("rlm/memory_rl-PassiveVisualMatch-v0").observation_space
    assert image.dtype == np.uint8 and image.shape == (3, 5, 5)
    assert isinstance(gymnasium.make("rlm/popgym-AutoencodeEasy-v0").observation_space, gymnasium.spaces.Tuple)
    assert gymnasium.make("rlm/popgym-MineSweeperEasy-v0").action_space == gymnasium.spaces.MultiDiscrete([4, 4])


def plain(x):
    """`x` with object arrays as lists, so that np.testing.assert_equal compares their items (arrays, tuples)."""
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, np.ndarray) and x.dtype == object:
        return [plain(v) for v in x]
    return x


def play(envs, steps, seed, reset_seed):
    """Everything `steps` seeded random batches return, after reset(seed=reset_seed)."""
    envs.action_space.seed(seed)
    out = [plain(envs.reset(seed=reset_seed))]
    for _ in range(steps):
        out.append(plain(envs.step(envs.action_space.sample())))
    return out


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("popgym/RepeatPreviousEasy", {}),
        ("popgym/AutoencodeEasy", {}),
        ("memory_rl/TMazePassive", {}),
        ("meta/Wind", {}),
        # info_state: a Tuple state (one object per env), a MultiDiscrete one under flatten, a Box one as the obs.
        ("popgym/RepeatPreviousEasy", {"info_state": True}),
        ("popgym/MineSweeperEasy", {"info_state": True, "flatten": True, "previous_action": True}),
        ("popgym/PositionOnlyCartPoleEasy", {"info_state": True, "markovian": "full"}),
        ("popgym/CountRecallEasy", {"info_state": True, "markovian": "full_and_partial"}),
    ],
    ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()) if isinstance(v, dict) else v,
)
def test_vector_env_equals_sync_vector_env_of_single_envs(env_id, kwargs):
    n = 5
    batched = rlm_envs.make_vec(env_id, num_envs=n, seed=3, **kwargs)
    assert batched.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert batched.observation_space == gymnasium.vector.utils.batch_space(batched.single_observation_space, n)
    single = SyncVectorEnv(
        [lambda i=i: RlmEnv(env_id, env_index=i, **kwargs) for i in range(n)], autoreset_mode=AutoresetMode.SAME_STEP
    )
    assert batched.single_observation_space == single.single_observation_space
    assert batched.single_action_space == single.single_action_space
    # One seed for every slot: SyncVectorEnv would give env i seed + i, where rlm's envs derive their own streams.
    steps = 3 * batched.max_episode_steps
    np.testing.assert_equal(play(batched, steps, 1, reset_seed=3), play(single, steps, 1, reset_seed=[3] * n))


def test_vector_step_returns_gymnasium_types():
    envs = rlm_envs.make_vec("popgym/CountRecallEasy", num_envs=4, seed=0)
    obs, info = envs.reset()
    assert obs in envs.observation_space and info == {}
    ended = False
    for _ in range(200):
        obs, rewards, terminated, truncated, info = envs.step(envs.action_space.sample())
        assert obs in envs.observation_space
        assert rewards.dtype == np.float64 and terminated.dtype == bool and truncated.dtype == bool
        if "final_obs" in info:
            ended = True
            done = terminated | truncated
            np.testing.assert_equal(info["_final_obs"], done)
            for i in np.flatnonzero(done):
                assert info["final_obs"][i] in envs.single_observation_space
            assert all(f is None for f in info["final_obs"][~done])
    assert ended


def test_gymnasium_make_vec_uses_the_batched_env():
    envs = gymnasium.make_vec("rlm/popgym-RepeatFirstEasy-v0", num_envs=3)
    assert isinstance(envs.unwrapped, rlm_envs.RlmVectorEnv)
    assert envs.num_envs == 3


@pytest.mark.parametrize("env_id", ["popgym/RepeatPreviousEasy", "popgym/MineSweeperEasy"])
def test_info_state_is_what_markovian_full_observes(env_id):
    with_info = RlmEnv(env_id, info_state=True)
    full = RlmEnv(env_id, markovian="full")
    assert with_info.state_space == full.observation_space
    with_info.action_space.seed(0)
    _, info = with_info.reset(seed=5)
    obs, _ = full.reset(seed=5)
    for _ in range(2 * with_info.max_episode_steps):
        np.testing.assert_equal(plain(info["state"]), plain(obs))
        action = with_info.action_space.sample()
        _, _, terminated, truncated, info = with_info.step(action)
        obs, *_ = full.step(action)
        if terminated or truncated:
            np.testing.assert_equal(plain(info["state"]), plain(obs))
            _, info = with_info.reset()
            obs, _ = full.reset()
