#!/usr/bin/env python3
"""Records numpy's legacy RandomState outputs and pomdp-baselines' Wind task set for the C++ NumpyLegacyRng tests.

Usage:  python -m scripts.record_numpy_legacy --pomdp-baselines PATH_TO_CHECKOUT
Needs numpy and gym (pomdp-baselines' envs/meta/toy_navigation/wind.py imports gym and matplotlib).
Writes tests/data/pomdp_baselines/numpy_legacy.json:
  raw: for seeds 0, 42 and 1337, the first 16 random_sample() values, then permutation(200), in that order;
  wind_60: pomdp-baselines' WindEnv(n_tasks=60).winds (np.random.seed(1337) in its constructor), then the learner's
  np.random.permutation(range(60)) that splits them into 40 train and 20 eval tasks (policies/learner.py).
"""
import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pomdp-baselines", required=True, help="path to a pomdp-baselines checkout")
    args = parser.parse_args()
    raw = {}
    for seed in (0, 42, 1337):
        np.random.seed(seed)
        samples = [float(np.random.random_sample()) for _ in range(16)]
        raw[str(seed)] = {"random_sample": samples, "permutation_200": [int(i) for i in np.random.permutation(200)]}

    sys.path.insert(0, os.path.join(os.path.abspath(args.pomdp_baselines), "envs", "meta", "toy_navigation"))
    from wind import WindEnv  # noqa: E402  (the reference checkout)

    env = WindEnv(n_tasks=60)
    winds = [[float(w[0]), float(w[1])] for w in env.winds]
    perm = [int(i) for i in np.random.permutation(range(60))]
    out = {"numpy": np.__version__, "raw": raw, "wind_60": {"winds": winds, "task_permutation": perm}}
    path = os.path.join(ROOT, "tests", "data", "pomdp_baselines", "numpy_legacy.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
