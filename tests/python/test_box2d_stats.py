"""The Box2D tasks through the Python API against Gymnasium's own (pybox2d, Box2D 2.3), statistically: every cell of
tests/data/box2d/gymnasium_reference.json (scripts/record_gymnasium_box2d.py: LunarLander discrete and continuous,
with and without wind, BipedalWalker normal and hardcore, each under Gymnasium's heuristic controller or uniform
random actions, 1000 episodes each) is played again by `rlm_envs.make_vec` with the same controllers
(scripts/box2d_heuristics.py), 500 episodes a lander cell and 200 a walker one, and the reset observations of 200
episodes are compared per element.

The checks and tolerances are tests/box2d/test_gymnasium_reference.cpp's, which explains them: means within 4
standard errors of the difference plus an engine allowance of a quarter of the reference's sd for what contacts decide
(Box2D 2.4.1 and 2.3 part there), rates as pooled proportions, the lander's first leg contact (the end of the free
flight) with no allowance, a two-sample Kolmogorov-Smirnov test on the heuristic landers' returns, and reset
observations by mean, sd, range and quantile coverage. Two differences, because the Python API does not expose the
env's terminal cause: a lander that ends with |x| >= 1 counts as out of bounds even if its body also touched the
ground (the reference counts that as a crash), and the walker's falls and exits past x < 0 are one rate (the
walker's obs do not hold its position; the reference's exit rate is at most 0.001).
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import rlm_envs

ROOT = Path(os.environ.get("RLM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(ROOT))
from scripts.box2d_heuristics import WalkerHeuristic, lander_heuristic  # noqa: E402

REFERENCE = json.loads((ROOT / "tests/data/box2d/gymnasium_reference.json").read_text())
# Episodes a cell: each slot's first few, so that long episodes are not under-counted. 200 as the C++ test has, and
# 500 for the lander, whose short episodes are cheap and whose first-contact check (no allowance) gains from them:
# gravity -10.5 instead of -10 moved the continuous heuristic's first contact by 6.3 steps against a tolerance of 6.5
# at 200 episodes, and by 5.8 against 4.6 at 500.
SLOTS = 25
EPISODES_PER_SLOT = {"LunarLander": 20, "BipedalWalker": 8}
SEED = 4000  # the C++ test plays env seeds 2000..2199 through the env classes; this is another sample
Z = 4.0
ENGINE_SD = 0.25
RESET_ENGINE = 2e-3
KS_COEFFICIENT = 1.95  # c(alpha) of the two-sample KS test at alpha = 0.001

# Engine allowances (in reference sds) of returns, lengths and rates, and whether the returns get the KS test.
LANDER_HEURISTIC = (0.0, ENGINE_SD, 0.0, True)
LANDER_RANDOM = (ENGINE_SD, ENGINE_SD, ENGINE_SD, False)
WALKER = (ENGINE_SD, ENGINE_SD, ENGINE_SD, False)


def rlm_id(gymnasium_id):
    """ "LunarLanderContinuous-v3" -> "box2d/LunarLanderContinuous"."""
    return "box2d/" + gymnasium_id.removesuffix("-v3")


class Policy:
    """The cell's controller for every slot of a batch: Gymnasium's heuristics (the walker's with a zero action on
    each episode's first step and a fresh gait state per episode, as Gymnasium's demo loop has it) or uniform random
    actions from a generator of its own."""

    def __init__(self, envs, kind, walker):
        self.kind, self.walker, self.space = kind, walker, envs.single_action_space
        self.continuous = self.space.shape != ()
        self.rng = np.random.default_rng(SEED + 1)
        self.gaits = [WalkerHeuristic() for _ in range(envs.num_envs)]
        self.first = np.ones(envs.num_envs, dtype=bool)

    def act(self, obs):
        n = len(obs)
        if self.kind == "random":
            if self.continuous:
                return self.rng.uniform(-1.0, 1.0, size=(n, *self.space.shape)).astype(np.float32)
            return self.rng.integers(self.space.n, size=n)
        if self.walker:
            return np.stack([np.zeros(4) if self.first[i] else self.gaits[i].act(obs[i]) for i in range(n)]).astype(
                np.float32
            )
        actions = [lander_heuristic(o, self.continuous) for o in obs]
        return np.stack(actions).astype(np.float32) if self.continuous else np.array(actions)

    def episode_ended(self, done):
        self.first = done.copy()
        for i in np.flatnonzero(done):
            self.gaits[i] = WalkerHeuristic()


def play(cell):
    """Returns, lengths, terminal causes and (lander) first-contact steps of each slot's first `episodes` episodes."""
    walker = cell["env_id"].startswith("BipedalWalker")
    episodes = episodes_per_slot(cell)
    envs = rlm_envs.make_vec(rlm_id(cell["env_id"]), num_envs=SLOTS, seed=SEED, **cell["kwargs"])
    policy = Policy(envs, cell["policy"], walker)
    obs, _ = envs.reset()
    out = {"returns": [], "lengths": [], "causes": [], "first_contacts": []}
    total, length = np.zeros(SLOTS), np.zeros(SLOTS, dtype=np.int64)
    contact = np.full(SLOTS, -1)
    finished = np.zeros(SLOTS, dtype=np.int64)
    while finished.min() < episodes:
        obs, reward, terminated, truncated, info = envs.step(policy.act(obs))
        total += reward
        length += 1
        done = terminated | truncated
        after = obs.copy()
        for i in np.flatnonzero(done):
            after[i] = info["final_obs"][i]
        if not walker:
            touched = (contact < 0) & ((after[:, 6] != 0) | (after[:, 7] != 0))
            contact[touched] = length[touched]
        counted = done & (finished < episodes)
        for i in np.flatnonzero(counted):
            out["returns"].append(total[i])
            out["lengths"].append(length[i])
            out["causes"].append(cause(walker, terminated[i], after[i], info["final_info"]["success"][i]))
            if contact[i] > 0:
                out["first_contacts"].append(contact[i])
        finished += done
        total[done], length[done], contact[done] = 0.0, 0, -1
        policy.episode_ended(done)
    return out


def episodes_per_slot(cell):
    return EPISODES_PER_SLOT[cell["env_id"].removesuffix("-v3").removesuffix("Continuous").removesuffix("Hardcore")]


def cause(walker, terminated, final_obs, success):
    if not terminated:
        return "truncated"
    if success:
        return "finished" if walker else "landed"
    if walker:
        return "fell"  # or out of bounds: merged, see the module's docstring
    return "out_of_bounds" if abs(final_obs[0]) >= 1.0 else "crashed"


def close_means(failures, what, ours, m_ref, sd_ref, n_ref, allowance):
    ours = np.asarray(ours, dtype=np.float64)
    se = np.sqrt(ours.var() / len(ours) + sd_ref**2 / n_ref)
    tol = Z * se + allowance
    line = (
        f"{what:<22} ours {ours.mean():9.3f}  gymnasium {m_ref:9.3f}  diff {ours.mean() - m_ref:+8.3f}  tol {tol:7.3f}"
    )
    print(line)
    if abs(ours.mean() - m_ref) > tol:
        failures.append(line)


def close_rates(failures, what, k, n, p_ref, n_ref, engine_sd):
    p = k / n
    pooled = (k + p_ref * n_ref) / (n + n_ref)
    spread = np.sqrt(pooled * (1 - pooled))
    tol = Z * spread * np.sqrt(1 / n + 1 / n_ref) + engine_sd * spread
    line = f"{what:<22} ours {p:9.3f}  gymnasium {p_ref:9.3f}  diff {p - p_ref:+8.3f}  tol {tol:7.3f}"
    print(line)
    if abs(p - p_ref) > tol + 1e-12:
        failures.append(line)


def ks_statistic(a, b):
    a, b = np.sort(a), np.sort(b)
    x = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, x, "right") / len(a) - np.searchsorted(b, x, "right") / len(b))))


CELLS = {
    name: (LANDER_HEURISTIC if c["policy"] == "heuristic" else LANDER_RANDOM)
    if c["env_id"].startswith("LunarLander")
    else WALKER
    for name, c in REFERENCE["cells"].items()
}


@pytest.mark.parametrize("name", list(CELLS))
def test_cell_matches_gymnasium(name):
    ref = REFERENCE["cells"][name]
    returns_sd, lengths_sd, rates_sd, ks_test = CELLS[name]
    ours = play(ref)
    n, n_ref = len(ours["returns"]), ref["n"]
    assert n == SLOTS * episodes_per_slot(ref)
    failures = []
    print(f"{name} (n = {n} ours, {n_ref} gymnasium)")
    close_means(
        failures, "return", ours["returns"], ref["return_mean"], ref["return_sd"], n_ref, returns_sd * ref["return_sd"]
    )
    close_means(
        failures, "length", ours["lengths"], ref["length_mean"], ref["length_sd"], n_ref, lengths_sd * ref["length_sd"]
    )
    if "first_contact_mean" in ref:  # the lander's free flight: no allowance
        touched = len(ours["first_contacts"])
        close_rates(failures, "first contact rate", touched, n, ref["first_contact_rate"], n_ref, 0.0)
        assert touched > 1
        n_touched_ref = round(ref["first_contact_rate"] * n_ref)
        close_means(
            failures,
            "first contact step",
            ours["first_contacts"],
            ref["first_contact_mean"],
            ref["first_contact_sd"],
            n_touched_ref,
            0.0,
        )
    rates = dict(ref["end_rates"])
    if "fell" in rates:
        rates["fell"] += rates.pop("out_of_bounds")
    for what, p_ref in rates.items():
        close_rates(failures, f"rate {what}", ours["causes"].count(what), n, p_ref, n_ref, rates_sd)
    d = ks_statistic(np.asarray(ours["returns"]), np.asarray(ref["returns"]))
    d_crit = KS_COEFFICIENT * np.sqrt((n + n_ref) / (n * n_ref))
    print(f"{'KS on returns':<22} D {d:.3f}  critical {d_crit:.3f}" + ("" if ks_test else "  (printed, not tested)"))
    if ks_test and d > d_crit:
        failures.append(f"KS on returns: D {d:.3f} > {d_crit:.3f}")
    assert not failures, f"{name}: " + "; ".join(failures)


@pytest.mark.parametrize("name", list(REFERENCE["reset"]))
def test_reset_observations_match_gymnasium(name):
    ref = REFERENCE["reset"][name]
    n, n_ref = 200, ref["n"]
    resets, _ = rlm_envs.make_vec(rlm_id(ref["env_id"]), num_envs=n, seed=SEED, **ref["kwargs"]).reset()
    resets = resets.astype(np.float64)
    failures = []
    for i in range(resets.shape[1]):
        c = resets[:, i]
        m, s = c.mean(), c.std()
        m_ref, s_ref, lo_ref, hi_ref = ref["mean"][i], ref["sd"][i], ref["min"][i], ref["max"][i]
        width = hi_ref - lo_ref
        kurtosis = np.mean((c - m) ** 4) / s**4 if s > 0 else 3.0
        mean_tol = Z * np.sqrt(s**2 / n + s_ref**2 / n_ref) + RESET_ENGINE
        sd_tol = Z * s_ref * np.sqrt(max(kurtosis - 1, 0) / 4 * (1 / n + 1 / n_ref)) + RESET_ENGINE
        checks = {
            "mean": abs(m - m_ref) <= mean_tol,
            "sd": abs(s - s_ref) <= sd_tol,
            "inside": c.min() >= lo_ref - 0.05 * width - RESET_ENGINE
            and c.max() <= hi_ref + 0.05 * width + RESET_ENGINE,
            "covers": c.min() <= ref["q05"][i] + RESET_ENGINE and c.max() >= ref["q95"][i] - RESET_ENGINE,
        }
        line = f"s{i:<2} {m:9.5f} {s:8.5f} [{c.min():9.5f}, {c.max():9.5f}]"
        line += f" | {m_ref:9.5f} {s_ref:8.5f} [{lo_ref:9.5f}, {hi_ref:9.5f}]"
        print(line, " ".join(k.upper() for k, ok in checks.items() if not ok))
        failures += [f"s{i} {k}" for k, ok in checks.items() if not ok]
    assert not failures, f"reset {name}: " + ", ".join(failures)
