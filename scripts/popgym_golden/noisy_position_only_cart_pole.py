"""NoisyPositionOnlyCartPole: the float64 4-state that reset() drew, and the two normals reset() added to the obs.

The recorder installs its draw recorder only after reset(), so the reset noise is recovered by replaying reset()'s
draws from a generator seeded like gymnasium's (checked against the state the env holds).
"""
import numpy as np
from gymnasium.utils import seeding

from scripts.popgym_golden.position_only_cart_pole import scripted_policies  # noqa: F401


def hidden_state(env):
    rng, _ = seeding.np_random(env._np_random_seed)
    state = rng.uniform(low=-0.05, high=0.05, size=(4,))
    assert np.array_equal(state, np.asarray(env.state)), "reset() drew differently from the replayed generator"
    noise = rng.normal(0, env.noise_sigma)
    return {"state": [float(v) for v in env.state], "noise": [float(v) for v in noise]}
