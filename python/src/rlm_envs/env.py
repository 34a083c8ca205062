"""One rlm env as a Gymnasium Env (`gymnasium.make("rlm/popgym-RepeatFirstEasy-v0")`)."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from . import _core
from .options import check_seed, state_space_of, wrappers, yaml_scalars
from .spaces import decode_one, encode_actions, to_gymnasium


class RlmEnv(gymnasium.Env):
    """An rlm env, seeded as slot `env_index` of `make_vec` with the same seed: `reset(seed=s)` then `reset()` after
    each episode plays what that slot of `make_vec(env_id, seed=s)` plays, episode after episode.

    Keywords: the wrappers (`previous_action`, `antialias`, `flatten`, `markovian`, `discrete_action`; all off, so the
    spaces are the env's own, as popgym's are) and the env options the id reads (`./rlm envs`, or
    `rlm_envs.env_option_keys(env_id)`). `info_state=True` adds the env's full state (popgym's get_state()) to each
    info as "state", for envs that have one.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        env_id: str,
        *,
        env_index: int = 0,
        previous_action: bool = False,
        antialias: bool = False,
        flatten: bool = False,
        markovian: str = "partial",
        discrete_action: bool = False,
        info_state: bool = False,
        render_mode: str | None = None,
        **options: Any,
    ) -> None:
        self.render_mode = render_mode  # kept, as Gymnasium and SB3 pass it; rlm envs have no renderer
        w = wrappers(previous_action, antialias, flatten, markovian, discrete_action)
        self._env = _core.Env(env_id, w, yaml_scalars(env_id, options))
        self.env_id: str = self._env.id
        self.observation_space = to_gymnasium(self._env.observation_space)
        self.action_space = to_gymnasium(self._env.action_space)
        self.max_episode_steps: int = self._env.max_episode_steps
        self.state_space = to_gymnasium(state_space_of(self._env)) if info_state else None
        self._env_index = int(env_index)
        self._seed: int | None = None
        self._episode = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            check_seed(seed)
        super().reset(seed=seed)
        if options:
            raise ValueError(f"{_core.gym_style_id(self.env_id)}: reset() takes no options, got {options!r}")
        new_seed = seed is not None or self._seed is None
        if new_seed:
            if seed is None:
                seed = int(self.np_random.integers(0, 2**63))
            self._seed, self._episode = int(seed), 0
        self._env.reset(self._seed, self._env_index, self._episode, new_seed)
        self._episode += 1
        return decode_one(self.observation_space, self._env.obs()), self._info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        raw = encode_actions(self.action_space, np.asarray(action)[None], 1).reshape(-1)
        reward, terminated, truncated, success = self._env.step(raw)
        info = self._info()
        if self._env.has_task_split:
            info["task"] = self._env.task()
            info["goal_state"] = self._env.is_goal_state()
        if self._env.reports_success and (terminated or truncated):
            info["success"] = success
        return decode_one(self.observation_space, self._env.obs()), float(reward), terminated, truncated, info

    def pin_task(self, index: int) -> None:
        """Meta-RL envs with a task split: the following resets play split task `index` (-1: drawn again)."""
        self._env.pin_task(index)

    def _info(self) -> dict[str, Any]:
        if self.state_space is None:
            return {}
        return {"state": decode_one(self.state_space, np.asarray(self._env.state(), dtype=np.float32))}
