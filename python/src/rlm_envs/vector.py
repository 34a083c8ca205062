"""A batch of rlm envs stepped in C++ as one Gymnasium VectorEnv (`rlm_envs.make_vec`, `gymnasium.make_vec`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from . import _core
from .options import check_seed, state_space_of, wrappers, yaml_scalars
from .spaces import decode_batch, decode_flat_batch, encode_actions, raw_size, to_gymnasium

_ONE_SEED = " (one seed for the batch: env i plays its own stream)"


def _item(batch: Any, i: int) -> Any:
    """Env i's value in a decoded batch (a tuple of batches for a Tuple space)."""
    if isinstance(batch, tuple):
        return tuple(_item(part, i) for part in batch)
    return batch[i]


class RlmVectorEnv(VectorEnv):
    """`num_envs` envs of one id, stepped by rlm's C++ VecEnv on `num_threads` threads.

    Episodes are those of the C++ VecEnv that rlm's trainers use: env i's k-th episode is seeded from (seed, i, k),
    whatever `num_threads` is. `reset(seed=s)` starts over as a VecEnv built with seed s; `reset()` starts the next
    episode of every env. An env whose episode ends is reset within the same step (autoreset mode SameStep): `step`
    returns its new episode's first obs, and `info["final_obs"]` the obs its episode ended on.

    Info: "final_obs" and "final_info" (with "success" for envs that have a goal) where an episode ended; "task" and
    "goal_state" after every step for the meta-RL envs (Wind, Point Robot). Keywords as `RlmEnv`'s. With
    `info_state=True`, "state" holds every env's full state after reset and step, and "final_info" the state each ended
    episode ended in. The C++ batch then steps with markovian="full_and_partial", whose obs rows end with the state, and
    the obs asked for are read from the front of those rows (or from the state itself, for markovian="full").
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(
        self,
        env_id: str,
        num_envs: int = 64,
        seed: int = 0,
        num_threads: int = 1,
        *,
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
        for name, value in (("num_envs", num_envs), ("num_threads", num_threads)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        seed = check_seed(seed, _ONE_SEED)
        w = wrappers(previous_action, antialias, flatten, markovian, discrete_action)
        scalars = yaml_scalars(env_id, options)
        self.state_space = None
        self._obs_columns = self._state_columns = slice(None)  # of the C++ obs rows
        if info_state:
            asked = _core.Env(env_id, w, scalars)  # the spaces asked for, and a clear error for an env with no state
            self.state_space = to_gymnasium(state_space_of(asked))
            # Flatten comes after Markovian (src/envs/registry.cpp): under it the state columns are flattened too.
            self._decode_state = decode_flat_batch if flatten else decode_batch
            state_floats = (spaces.flatdim if flatten else raw_size)(self.state_space)
            self._state_columns = slice(-state_floats, None)
            self._obs_columns = {"partial": slice(0, -state_floats), "full": self._state_columns}.get(
                markovian, slice(None)
            )
            w = wrappers(previous_action, antialias, flatten, "full_and_partial", discrete_action)
        self._build = lambda s: _core.VecEnv(env_id, int(num_envs), int(num_threads), s, w, scalars)
        self._vec = self._build(seed)
        self._seed = seed
        self._fresh = True  # built with self._seed and never reset: reset(seed=self._seed) need not rebuild it
        self.env_id: str = self._vec.id
        self.num_envs = int(num_envs)
        self.num_threads: int = self._vec.num_threads
        self.max_episode_steps: int = self._vec.max_episode_steps
        self.single_observation_space = to_gymnasium((asked if info_state else self._vec).observation_space)
        self.single_action_space = to_gymnasium(self._vec.action_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._everyone = np.ones(self.num_envs, dtype=bool)  # a mask for _masked, which copies it

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if seed is not None:
            seed = check_seed(seed, _ONE_SEED)
        super().reset(seed=seed)
        if options:
            raise ValueError(f"{_core.gym_style_id(self.env_id)}: reset() takes no options (it resets every env)")
        if seed is not None and (seed != self._seed or not self._fresh):
            self._vec = self._build(seed)
            self._seed = seed
        self._fresh = False
        self._vec.reset()
        raw_obs = self._vec.obs()
        info = self._state_info(raw_obs, self._everyone) if self.state_space is not None else {}
        return decode_batch(self.single_observation_space, raw_obs[:, self._obs_columns]), info

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        raw_obs, rewards, terminated, truncated, ended = self._vec.step_results(
            encode_actions(self.single_action_space, actions, self.num_envs)
        )
        self._fresh = False
        obs = decode_batch(self.single_observation_space, raw_obs[:, self._obs_columns], fresh=True)
        # Gymnasium's SameStep infos (SyncVectorEnv's _add_info, batched): each env's step info under its key with a
        # "_key" mask, except where the episode ended, where the step info is under "final_info" and the reset's info
        # (the new episode's state, if asked for) at the top.
        step_info = self._step_info()
        everyone = self._everyone
        if not ended:  # the common step: every env's step info (if any) at the top
            info = self._masked(step_info, everyone) if step_info else {}
            if self.state_space is not None:
                info.update(self._state_info(raw_obs, everyone))
            return obs, rewards, terminated, truncated, info
        done = terminated | truncated
        info = self._masked(step_info, ~done) if step_info and not done.all() else {}
        if self.state_space is not None:
            info.update(self._state_info(raw_obs, everyone))
        rows = done.nonzero()[0]
        raw_final = self._vec.final_obs()
        final = decode_batch(self.single_observation_space, raw_final[rows, self._obs_columns], fresh=True)
        info["final_obs"], info["_final_obs"] = self._objects(final, rows), done
        final_info = self._masked(step_info, done)
        if self.state_space is not None:
            final_info.update(self._state_info(raw_final, done))
        if self._vec.reports_success:
            final_info.update(self._masked({"success": self._vec.successes().astype(bool)}, done))
        info["final_info"], info["_final_info"] = final_info, done.copy()
        return obs, rewards, terminated, truncated, info

    def _objects(self, batch: Any, rows: np.ndarray) -> np.ndarray:
        """Gymnasium's format for values it cannot stack: env rows[j]'s value is batch's j-th (a batch of len(rows)),
        every other env's None."""
        out = np.empty(self.num_envs, dtype=object)  # all None
        for j, i in enumerate(rows.tolist()):
            out[i] = _item(batch, j)
        return out

    def _state_info(self, raw: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
        """{"state", "_state"} from the state columns of C++ obs rows, where `mask` holds. As SyncVectorEnv stacks
        RlmEnv's info: an array for a Box or MultiDiscrete state, one tuple per env for a Tuple state."""
        if isinstance(self.state_space, spaces.Tuple):
            rows = mask.nonzero()[0]
            state = self._decode_state(self.state_space, raw[rows, self._state_columns])
            return {"state": self._objects(state, rows), "_state": mask.copy()}
        return self._masked({"state": self._decode_state(self.state_space, raw[:, self._state_columns])}, mask)

    def _step_info(self) -> dict[str, np.ndarray]:
        """What RlmEnv's step info holds for every env, batched (the meta-RL envs' task and goal state)."""
        if not self._vec.reports_goal_state:
            return {}
        return {"task": self._vec.tasks().astype(np.int64), "goal_state": self._vec.goal_states().astype(bool)}

    @staticmethod
    def _masked(values: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
        """`values` (batched arrays) where `mask` holds, zero elsewhere, each with its "_key" mask."""
        out = {}
        for key, value in values.items():
            where = mask.reshape(mask.shape + (1,) * (value.ndim - 1))
            out[key] = np.where(where, value, np.zeros_like(value))
            out["_" + key] = mask.copy()
        return out

    def pin_task(self, env: int, index: int) -> None:
        """Meta-RL envs with a task split: env `env`'s following resets play split task `index` (-1: drawn again)."""
        self._vec.pin_task(env, index)

    @property
    def split_size(self) -> int:
        """Tasks in each env's split (meta-RL envs with the task_split option; 0 otherwise)."""
        return self._vec.split_size

    def close_extras(self, **kwargs: Any) -> None:
        self._vec = None
