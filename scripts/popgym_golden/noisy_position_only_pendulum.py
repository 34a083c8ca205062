"""NoisyPositionOnlyPendulum: the float64 state [theta, theta_dot] that reset() drew, and the two normals reset()
added to the obs (recovered by replaying reset()'s draws, as in noisy_position_only_cart_pole.py)."""
import numpy as np
from gymnasium.utils import seeding

from scripts.popgym_golden.position_only_pendulum import scripted_policies  # noqa: F401


def hidden_state(env):
    rng, _ = seeding.np_random(env._np_random_seed)
    state = rng.uniform(low=-np.array([np.pi, 1.0]), high=np.array([np.pi, 1.0]))
    assert np.array_equal(state, np.asarray(env.state)), "reset() drew differently from the replayed generator"
    noise = rng.normal(0, env.noise_sigma)
    return {"state": [float(v) for v in env.state], "noise": [float(v) for v in noise]}
