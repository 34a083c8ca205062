"""Every POPGym id through the Python API against popgym 1.0.7 itself, under a random policy: episode returns,
episode lengths and first observations agree (two-sample z-tests at |z| < 5, as tests/envs/test_sampling.cpp uses;
exact agreement where a quantity does not vary). Fixed seeds, so a run is repeatable."""

import gymnasium
import numpy as np
import pytest

import rlm_envs

popgym = pytest.importorskip("popgym")

IDS = [i for i in rlm_envs.env_ids() if i.startswith("popgym/")]
STEP_BUDGET = 20000  # per side and id: enough episodes to see a wrong reward scale, length or start distribution


def flat(obs):
    if isinstance(obs, tuple):
        return np.concatenate([flat(part) for part in obs])
    return np.asarray(obs, dtype=np.float64).ravel()


def random_rollouts(env, seed):
    """(returns, lengths, first observations) of whole episodes played with random actions until STEP_BUDGET."""
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    returns, lengths, first = [], [], [flat(obs)]
    steps = 0
    while steps < STEP_BUDGET or not returns:
        total, n, done = 0.0, 0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            total += float(reward)
            n += 1
            done = terminated or truncated
        returns.append(total)
        lengths.append(n)
        steps += n
        obs, _ = env.reset()
        first.append(flat(obs))
    return np.array(returns), np.array(lengths, dtype=np.float64), np.stack(first)


def assert_same_distribution(ours, theirs, what):
    """Component-wise means: |z| < 5, or equal where neither side varies."""
    ours, theirs = np.atleast_2d(ours.T).T, np.atleast_2d(theirs.T).T
    for c in range(ours.shape[1]):
        a, b = ours[:, c], theirs[:, c]
        spread = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        if spread == 0:
            assert a.mean() == b.mean(), f"{what}[{c}]: {a.mean()} here, {b.mean()} in popgym (neither varies)"
        else:
            z = (a.mean() - b.mean()) / spread
            assert abs(z) < 5, f"{what}[{c}]: mean {a.mean():.4g} here, {b.mean():.4g} in popgym (z = {z:.1f})"


@pytest.mark.parametrize("env_id", IDS)
def test_random_policy_statistics_match_popgym(env_id):
    ours = random_rollouts(gymnasium.make(rlm_envs.gymnasium_id(env_id)).unwrapped, seed=1)
    name = "popgym-" + env_id.split("/", 1)[1] + "-v0"
    theirs = random_rollouts(gymnasium.make(name, disable_env_checker=True).unwrapped, seed=2)
    assert_same_distribution(ours[0], theirs[0], "return")
    assert_same_distribution(ours[1], theirs[1], "length")
    assert_same_distribution(ours[2], theirs[2], "first obs")
