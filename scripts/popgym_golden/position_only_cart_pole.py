"""PositionOnlyCartPole: the float64 4-state [x, x_dot, theta, theta_dot] that reset() drew.

The scripted policies read that hidden state: "balance" is a linear state-feedback controller that survives all L
steps (return 1, the best), "always_right" pushes right until the pole falls (the shortest episodes, return T/L).
The other CartPole families reuse them.
"""


def hidden_state(env):
    return {"state": [float(v) for v in env.state]}


def balance(env, obs, t, rng):
    x, x_dot, theta, theta_dot = env.state
    return int(0.5 * x + 1.0 * x_dot + 10.0 * theta + 2.0 * theta_dot > 0)


def always_right(env, obs, t, rng):
    return 1


def scripted_policies():
    return {"balance": balance, "always_right": always_right}
