#!/usr/bin/env python3
"""Learning curves of PPO runs, side by side: the env steps each run took to first reach given returns.

Reads every metrics.jsonl under the folders given (run folders or folders of them), names each run by its
experiment name (and seed when several runs share a name), and prints one line per run: steps reached, the last
return, and the first step at which charts/episode_return_mean reached each threshold ('-' if never). With --csv it
also writes every iteration of every run in long form (run, step, and the metrics below), for plots and
docs/RESULTS.md.

  python3 -m scripts.learn_summary RUNS_DIR... [--thresholds 0,0.9] [--csv FILE]
"""
import argparse
import csv
import json
import pathlib
import sys

METRICS = [
    "charts/episode_return_mean",
    "charts/steps_per_second",
    "losses/first_ratio_deviation",
    "losses/kl",
    "losses/kl_coeff",
    "losses/clip_fraction",
    "losses/value_loss",
    "losses/entropy",
    "losses/grad_norm",
]


def read_run(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def run_name(metrics_path):
    run_dir = metrics_path.parent
    name = run_dir.parent.name
    seed = None
    config = run_dir / "config.yaml"
    if config.exists():
        for line in config.read_text().splitlines():
            stripped = line.strip()
            if stripped.startswith("seed:"):
                seed = stripped.split(":", 1)[1].strip()
                break
    return name, seed


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=pathlib.Path)
    parser.add_argument("--thresholds", default="0,0.9", help="returns to report the first step of, comma-separated")
    parser.add_argument("--csv", type=pathlib.Path, help="write every iteration of every run here")
    args = parser.parse_args()
    thresholds = [float(t) for t in args.thresholds.split(",")]

    runs = []
    for root in args.dirs:
        if not root.exists():
            sys.exit(f"learn_summary.py: {root}: no such folder")
        for path in sorted(root.rglob("metrics.jsonl")):
            name, seed = run_name(path)
            runs.append((name, seed, read_run(path)))
    if not runs:
        sys.exit("learn_summary.py: no metrics.jsonl under " + " ".join(map(str, args.dirs)))
    names = [name for name, _, _ in runs]
    labelled = [(name if names.count(name) == 1 or seed is None else f"{name}/seed{seed}", rows)
                for name, seed, rows in runs]

    header = f"{'run':32} {'steps':>10} {'return':>8} " + " ".join(f"{'to ' + format(t, 'g'):>10}" for t in thresholds)
    print(header)
    for label, rows in labelled:
        if not rows:
            print(f"{label:32} {'no iteration logged':>19}")
            continue
        last = rows[-1]
        firsts = []
        for t in thresholds:
            hit = next((r["step"] for r in rows if r.get("charts/episode_return_mean", float("-inf")) >= t), None)
            firsts.append("-" if hit is None else f"{hit:,}")
        print(f"{label:32} {last['step']:>10,} {last.get('charts/episode_return_mean', float('nan')):>8.3f} "
              + " ".join(f"{f:>10}" for f in firsts))

    if args.csv:
        tmp = args.csv.with_name(args.csv.name + ".tmp")
        with open(tmp, "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["run", "step"] + METRICS)
            for label, rows in labelled:
                for r in rows:
                    writer.writerow([label, r["step"]] + [r.get(m, "") for m in METRICS])
        tmp.replace(args.csv)


if __name__ == "__main__":
    main()
