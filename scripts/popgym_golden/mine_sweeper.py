"""MineSweeper: the hidden grid at reset (row-major, 0 = clear, 1 = mine); the neighbour counts follow from it.

Scripted policies reach both ends of the return range and the truncation step:
  perfect   the first still-clear cell each step: return 1, terminated when the last clear cell is viewed
  worst     the first clear cell L-1 times, then the first mine: return -1 (popgym's test_worst)
  reclick   the first clear cell every step: truncated at step L (v1.0.7's fixed truncation)
"""
import numpy as np
from popgym.envs.minesweeper import HiddenSquare


def hidden_state(env):
    return {"hidden_grid": [int(v) for v in env.hidden_grid.ravel()]}


def _first(env, kind):
    return tuple(int(v) for v in np.argwhere(env.hidden_grid == kind)[0])


def _worst(env, obs, t, rng):
    if t == 0:
        env._golden_first_clear = _first(env, HiddenSquare.CLEAR)
    if t < env.max_episode_length - 1:
        return env._golden_first_clear
    return _first(env, HiddenSquare.MINE)


def _reclick(env, obs, t, rng):
    if t == 0:
        env._golden_first_clear = _first(env, HiddenSquare.CLEAR)
    return env._golden_first_clear


def scripted_policies():
    return {
        "perfect": lambda env, obs, t, rng: _first(env, HiddenSquare.CLEAR),
        "worst": _worst,
        "reclick": _reclick,
    }
