"""Battleship: the ship board at reset (row-major, 1 = ship cell); guesses are all zero then.

Scripted policies cover both ends of the return range and the step where terminated and truncated coincide:
  perfect      every ship cell once, row-major: return 1, terminated on the 12th shot
  all_miss     the first water cell B*B times: return -B*B/(B*B-12), truncated on the last step
  water_first  every water cell, then every ship cell: the last shot both terminates and truncates, return 0
  repeat_hit   the first ship cell B*B times: one hit, then repeat shots that count as misses
"""
import numpy as np


def hidden_state(env):
    return {"board": [int(v) for v in env.board.ravel()]}


def _cells(env, ship):
    mask = env.board.astype(bool) if ship else ~env.board.astype(bool)
    return [tuple(int(v) for v in rc) for rc in np.argwhere(mask)]


def scripted_policies():
    return {
        "perfect": lambda env, obs, t, rng: _cells(env, True)[t],
        "all_miss": lambda env, obs, t, rng: _cells(env, False)[0],
        "water_first": lambda env, obs, t, rng: (_cells(env, False) + _cells(env, True))[t],
        "repeat_hit": lambda env, obs, t, rng: _cells(env, True)[0],
    }
