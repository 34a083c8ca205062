"""MultiarmedBandit: the float32 payout probabilities drawn at reset. Every step draws one U[0,1) double, which the
recorder stores per step for C++'s inject_draws().

Scripted policies: best (always the arm with the highest p) and worst (always the lowest).
"""
import numpy as np


def hidden_state(env):
    return {"bandits": [float(p) for p in env.bandits]}


def scripted_policies():
    return {
        "best": lambda env, obs, t, rng: int(np.argmax(env.bandits)),
        "worst": lambda env, obs, t, rng: int(np.argmin(env.bandits)),
    }
