"""PositionOnlyPendulum: the float64 state [theta, theta_dot] that reset() drew.

The scripted policies read that hidden state: "swing_up" pumps energy and then balances with a linear controller
(returns close to the best, 1), "hold_down" keeps the pole hanging at the bottom (about -0.21, the most a policy can
lose per step over a whole episode is little more). Actions are float32, as action_space.sample() gives them.
The noisy family reuses them.
"""
import numpy as np


def hidden_state(env):
    return {"state": [float(v) for v in env.state]}


def _angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi


def swing_up(env, obs, t, rng):
    theta, theta_dot = env.state
    angle = _angle_normalize(theta)
    if abs(angle) < 0.6:
        u = -(10.0 * angle + 2.0 * theta_dot)
    else:
        energy = 0.5 * theta_dot**2 + 15.0 * np.cos(theta)  # 15 = upright at rest
        u = 2.0 * np.sign(theta_dot * (15.0 - energy)) if theta_dot != 0 else 2.0
    return np.array([np.clip(u, -2.0, 2.0)], dtype=np.float32)


def hold_down(env, obs, t, rng):
    theta, theta_dot = env.state
    angle = _angle_normalize(theta - np.pi)
    return np.array([np.clip(-(10.0 * angle + 2.0 * theta_dot), -2.0, 2.0)], dtype=np.float32)


def scripted_policies():
    return {"swing_up": swing_up, "hold_down": hold_down}
