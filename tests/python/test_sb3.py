"""Drop-in use by a Python trainer from PyPI: sb3-contrib's RecurrentPPO trains on rlm envs made by Gymnasium, with no
adapter but SB3's own (make_vec_env wraps gymnasium.make envs in its Monitor and DummyVecEnv)."""

import math

import pytest

import rlm_envs  # noqa: F401  (registers the ids)

sb3_contrib = pytest.importorskip("sb3_contrib")
from stable_baselines3.common.env_util import make_vec_env  # noqa: E402


@pytest.mark.parametrize(
    "env_id,kwargs",
    [
        ("rlm/popgym-RepeatPreviousEasy-v0", {}),  # Discrete observations, one-hot encoded by SB3
        ("rlm/popgym-PositionOnlyCartPoleEasy-v0", {}),  # a float Box
        ("rlm/memory_rl-TMazePassive-v0", {"corridor_length": 5}),  # an env option through gymnasium.make
    ],
)
def test_recurrent_ppo_trains(env_id, kwargs):
    envs = make_vec_env(env_id, n_envs=4, seed=0, env_kwargs=kwargs)
    model = sb3_contrib.RecurrentPPO("MlpLstmPolicy", envs, n_steps=128, batch_size=128, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    episodes = list(model.ep_info_buffer)  # SB3's Monitor saw whole episodes end
    assert episodes and all(math.isfinite(e["r"]) and e["l"] > 0 for e in episodes)
    loss = model.logger.name_to_value.get("train/loss")
    assert loss is None or math.isfinite(loss)
