"""rlm's environments from Python: POPGym, Memory-RL, pomdp-baselines' meta-RL tasks, Best-Arm and the Box2D POMDPs,
stepped in C++ behind Gymnasium's API.

    import gymnasium
    import rlm_envs

    env = gymnasium.make("rlm/popgym-RepeatFirstEasy-v0")                      # one env
    envs = rlm_envs.make_vec("popgym/RepeatFirstEasy", num_envs=64, seed=0)    # a batch, stepped in C++

Importing the package registers every id of `./rlm envs` with Gymnasium as "rlm/<family>-<Name>-v0".
"""

from __future__ import annotations

from typing import Any

import gymnasium

from . import _core
from .env import RlmEnv
from .vector import RlmVectorEnv

__all__ = ["RlmEnv", "RlmVectorEnv", "env_ids", "env_option_keys", "gymnasium_id", "make_vec"]


def env_ids() -> list[str]:
    """Every env id, canonical spelling ("popgym/RepeatFirstEasy"), in `./rlm envs` order."""
    return list(_core.registered_env_ids())


def env_option_keys(env_id: str) -> list[str]:
    """The env options (keyword arguments) that `env_id` reads; KeyError for an unknown id."""
    return list(_core.env_option_keys(env_id))


def gymnasium_id(env_id: str) -> str:
    """The id Gymnasium knows `env_id` by: "popgym/RepeatFirstEasy" -> "rlm/popgym-RepeatFirstEasy-v0"."""
    return "rlm/" + _core.gym_style_id(_core.canonical_env_id(env_id))


def make_vec(env_id: str, num_envs: int = 64, seed: int = 0, num_threads: int = 1, **kwargs: Any) -> RlmVectorEnv:
    """`num_envs` envs of `env_id` (either spelling) stepped together in C++ on `num_threads` threads: a Gymnasium
    VectorEnv with autoreset mode SameStep. Keywords: the wrappers and env options, as `RlmEnv` takes them."""
    return RlmVectorEnv(env_id, num_envs=num_envs, seed=seed, num_threads=num_threads, **kwargs)


def _register_all() -> None:
    # No max_episode_steps: the envs end their own episodes (the limit depends on options), and a TimeLimit would
    # truncate with a different flag. No order enforcing: stepping before reset raises the envs' own RuntimeError.
    for env_id in _core.registered_env_ids():
        name = gymnasium_id(env_id)
        if name in gymnasium.registry:
            continue
        gymnasium.register(
            id=name,
            entry_point="rlm_envs.env:RlmEnv",
            vector_entry_point="rlm_envs.vector:RlmVectorEnv",
            kwargs={"env_id": env_id},
            order_enforce=False,
        )


_register_all()
