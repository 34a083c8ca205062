#!/usr/bin/env python3
"""Plots training curves from run folders: one picture per metric, seeds of one config drawn as mean and band.

Each RUN_DIR is a run folder written by `rlm train` (metrics.jsonl, config.yaml). Runs whose config.yaml differ
only in experiment.seed and experiment.name form one group, drawn as the mean over its runs with a min-max band;
a group is labelled by the config keys that differ between groups (e.g. "model.memory.type=ffm").

    plot_runs.py RUN_DIR [RUN_DIR ...] --out OUT_DIR [--metrics TAG,TAG,...] [--group-by auto|none|KEY]
                 [--width-px 1280 --height-px 800] [--formats png,svg] [--dump-groups]

`./rlm plot ARGS...` runs this script with the project's .venv/bin/python and passes ARGS through unchanged, in
the caller's folder. Writes OUT_DIR/<tag with '/' replaced by '__'>.<format> for every metric and prints one line
per file written; --dump-groups prints the groups as JSON (label -> run folders) and plots nothing. Errors are one
line on stderr, "plot: ...", with exit status 2. Needs numpy, matplotlib and PyYAML (all in the project's .venv).
"""

import argparse
import json
import math
import os
import sys
import tempfile

import matplotlib
import numpy as np
import yaml

matplotlib.use("Agg")  # no display on training machines; before anything imports a backend
from matplotlib.figure import Figure  # noqa: E402  (Figure without pyplot: no global figure state to leak)
from matplotlib.ticker import EngFormatter  # noqa: E402

# Per-iteration wall-clock timings: they describe the machine, not learning, so they are left out by default.
TIMING_TAGS = {"charts/steps_per_second", "charts/iteration_seconds", "charts/update_seconds",
               "charts/rollout_seconds"}
# The curves people look at first: put first, and never dropped by the default selection.
HEADLINE_TAGS = ["charts/episode_return_mean", "eval/episode_return_mean"]
# Keys that differ between seeds of one experiment; runs that differ only in these form one group.
PER_SEED_KEYS = {"experiment.seed", "experiment.name"}
FORMATS = ("png", "svg", "pdf")
DPI = 100


class PlotError(Exception):
    """A problem with the input, reported as one line "plot: ..." and exit status 2."""


# ---------------------------------------------------------------------------------------------------------------
# config.yaml
# ---------------------------------------------------------------------------------------------------------------

def _canonical(value):
    """A value in one spelling, so equal values compare equal (0.00030 == 3e-4, [64,64] == [64, 64], True == true).

    Scalars come in as the text of the file (yaml.BaseLoader): YAML 1.1's own resolution would read 3e-4 as a string
    and "off" as false, so numbers and booleans are recognised here instead.
    """
    if isinstance(value, list):
        return "[" + ", ".join(_canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        raise ValueError("a mapping inside a list")
    text = value.strip()
    if text in ("~", "null", "Null", "NULL", ""):
        return ""
    if text in ("true", "True", "TRUE", "false", "False", "FALSE"):
        return text.lower()
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    # rlm writes doubles in their shortest form (1.0 as "1"); a hand-edited file may say 1.0 or 1e0.
    return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)


def parse_config_yaml(text):
    """config.yaml flattened to {"model.memory.type": "gru", ...}; ValueError when it is not a YAML mapping."""
    try:
        document = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError as e:
        raise ValueError(str(e)) from None
    if not isinstance(document, dict):
        raise ValueError("not a mapping")
    flat = {}

    def walk(node, prefix):
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict) and value:
                walk(value, path)
            else:
                flat[path] = "" if isinstance(value, dict) else _canonical(value)

    walk(document, "")
    return flat


def read_config(run_dir):
    """The run's flattened config, or None when config.yaml is missing or not a YAML mapping."""
    try:
        with open(os.path.join(run_dir, "config.yaml"), encoding="utf-8") as f:
            return parse_config_yaml(f.read())
    except (OSError, UnicodeDecodeError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------------------------
# metrics.jsonl
# ---------------------------------------------------------------------------------------------------------------

def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_metrics(run_dir):
    """{tag: (steps, values)} of the finite values, sorted by step (the last row wins for a repeated step)."""
    path = os.path.join(run_dir, "metrics.jsonl")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise PlotError(f"{path} not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PlotError(f"cannot read {path}: {e}") from None
    lines = text.split("\n")
    points = {}  # tag -> ([steps], [values]), in the file's order
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            # A run still being written can end in half a row (no newline yet): skip it rather than refuse the run.
            if number == len(lines):
                print(f"plot: {path}:{number}: skipping an incomplete last row", file=sys.stderr)
                continue
            raise PlotError(f"{path}:{number}: not JSON") from None
        if not isinstance(row, dict):
            raise PlotError(f"{path}:{number}: not a JSON object")
        step = row.get("step")
        if not _is_number(step) or not math.isfinite(step) or step != int(step):
            raise PlotError(f"{path}:{number}: no integer 'step'")
        for tag, value in row.items():
            # null (NaN when written) means the row did not log the tag, e.g. an evaluation that did not run.
            if tag != "step" and _is_number(value) and math.isfinite(value):
                steps, values = points.setdefault(tag, ([], []))
                steps.append(int(step))
                values.append(float(value))
    series = {}
    for tag, (steps, values) in points.items():
        steps, values = np.asarray(steps, dtype=np.int64), np.asarray(values, dtype=np.float64)
        order = np.argsort(steps, kind="stable")
        steps, values = steps[order], values[order]
        last = np.append(steps[1:] != steps[:-1], True)  # a resumed run can log a step again: keep the latest row
        series[tag] = (steps[last], values[last])
    return series


# ---------------------------------------------------------------------------------------------------------------
# Grouping
# ---------------------------------------------------------------------------------------------------------------

def display_names(run_dirs):
    """A short name per run: its folder name, or the path given when two runs share a folder name."""
    names = [os.path.basename(os.path.normpath(run_dir)) for run_dir in run_dirs]
    return {run_dir: (name if names.count(name) == 1 else os.path.normpath(run_dir))
            for run_dir, name in zip(run_dirs, names, strict=True)}


def fallback_label(runs, names):
    if len(runs) == 1:
        return names[runs[0]]
    return f"{names[runs[0]]} (+{len(runs) - 1} run{'s' if len(runs) > 2 else ''})"


def group_runs(run_dirs, configs, group_by):
    """[(label, [run_dir, ...])] in the order the runs were given."""
    names = display_names(run_dirs)
    if group_by == "none":
        return [(names[run], [run]) for run in run_dirs]

    groups = {}  # grouping key -> runs; a run whose config.yaml we cannot read is a group of its own
    for run in run_dirs:
        config = configs[run]
        if config is None:
            key = ("unparsed", run)
        elif group_by == "auto":
            key = ("config", tuple(sorted((k, v) for k, v in config.items() if k not in PER_SEED_KEYS)))
        else:
            key = ("config", ((group_by, config.get(group_by)),))
        groups.setdefault(key, []).append(run)

    parsed = [dict(key[1]) for key in groups if key[0] == "config"]
    if group_by == "auto":
        keys = sorted(set().union(*parsed)) if parsed else []
        differing = [k for k in keys if len({config.get(k) for config in parsed}) > 1]
    else:
        if parsed and all(config[group_by] is None for config in parsed):
            raise PlotError(f"no run's config.yaml has the key '{group_by}'")
        differing = [group_by]

    labelled = []
    for key, runs in groups.items():
        if key[0] == "config" and differing:
            config = dict(key[1])
            label = ", ".join(f"{k}={'(unset)' if config.get(k) is None else config[k]}" for k in differing)
        else:
            label = fallback_label(runs, names)
        labelled.append([label, runs])
    # Labels are keys of --dump-groups' JSON and legend entries: make them unique.
    seen = {}
    for entry in labelled:
        count = seen[entry[0]] = seen.get(entry[0], 0) + 1
        if count > 1:
            entry[0] = f"{entry[0]} ({count})"
    return [tuple(entry) for entry in labelled]


# ---------------------------------------------------------------------------------------------------------------
# Curves and pictures
# ---------------------------------------------------------------------------------------------------------------

def group_curve(series_list):
    """(steps, mean, low, high, runs) over the runs that logged the metric; low/high are None for a single run."""
    if len(series_list) == 1:
        steps, values = series_list[0]
        return steps, values, None, None, 1
    # Runs seldom log at the same steps (different num_envs, eval intervals): put every run on the union of their
    # steps, interpolating only inside each run's own range so a shorter run is not extended by a flat line.
    grid = np.unique(np.concatenate([steps for steps, _ in series_list]))
    table = np.full((len(series_list), len(grid)), np.nan)
    for row, (steps, values) in enumerate(series_list):
        inside = (grid >= steps[0]) & (grid <= steps[-1])
        table[row, inside] = np.interp(grid[inside], steps, values)
    # Every grid point is a step of some run, so no column is all NaN. Past the end of a shorter run the statistics
    # are over fewer runs, which shows as the band narrowing.
    return grid, np.nanmean(table, axis=0), np.nanmin(table, axis=0), np.nanmax(table, axis=0), len(series_list)


def select_metrics(requested, all_series):
    """The tags to plot: the requested ones (each must have a value somewhere) or the default selection."""
    logged = []  # tags with a finite value in some run, in first-logged order
    for series in all_series:
        logged.extend(tag for tag in series if tag not in logged)
    if requested:
        for tag in requested:
            if tag not in logged:
                raise PlotError(f"metric '{tag}' has no values in any run")
        return requested
    headline = [tag for tag in HEADLINE_TAGS if tag in logged]
    rest = [tag for tag in logged if tag not in TIMING_TAGS and tag not in headline]
    if not headline and not rest:
        raise PlotError("no metric has values in any run")
    return headline + rest


def plot_metric(tag, groups, metrics, width_px, height_px):
    # The quarter pixel absorbs float rounding: Agg truncates width_in * dpi, and e.g. 114 / 100 * 100 < 114.
    fig = Figure(figsize=((width_px + 0.25) / DPI, (height_px + 0.25) / DPI), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    for label, runs in groups:
        series_list = [metrics[run][tag] for run in runs if tag in metrics[run]]
        if not series_list:
            continue
        steps, mean, low, high, count = group_curve(series_list)
        if low is not None:
            label = f"{label}: mean of {count} runs, band min-max"
        marker = "o" if len(steps) == 1 else None  # a single point draws no line
        (line,) = ax.plot(steps, mean, label=label, marker=marker, linewidth=1.5)
        if low is not None:
            ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_title(tag)
    ax.set_xlabel("env steps")
    ax.set_ylabel(tag)
    ax.xaxis.set_major_formatter(EngFormatter(sep=""))  # 2M rather than an offset "1e6" in the corner
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def save_atomic(fig, path, fmt):
    """Writes the picture under a temporary name in the same folder, then renames: readers never see half a file."""
    directory = os.path.dirname(path) or "."
    fd, temp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format=fmt, dpi=DPI)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # mkstemp makes the file 0600; give it a normal file's permissions
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(prog="plot", description=__doc__.split("\n")[0])
    parser.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run folders (with metrics.jsonl)")
    parser.add_argument("--out", metavar="OUT_DIR", help="folder for the pictures (created if missing)")
    parser.add_argument("--metrics", default="", help="comma-separated tags (default: every tag with a value, "
                        "less the timing tags)")
    parser.add_argument("--group-by", default="auto", metavar="auto|none|KEY",
                        help="auto: runs differing only in experiment.seed/name form a group; none: a curve per "
                        "run; KEY: group by that dotted config key (default auto)")
    parser.add_argument("--width-px", type=int, default=1280)
    parser.add_argument("--height-px", type=int, default=800)
    parser.add_argument("--formats", default="png,svg", help=f"comma-separated, of {', '.join(FORMATS)}")
    parser.add_argument("--dump-groups", action="store_true", help="print the groups as JSON and plot nothing")
    args = parser.parse_args(argv)
    if args.out is None and not args.dump_groups:
        parser.error("--out OUT_DIR is required")
    if args.width_px < 1 or args.height_px < 1:
        parser.error("--width-px and --height-px must be positive")
    args.formats = list(dict.fromkeys(f.strip().lower() for f in args.formats.split(",") if f.strip()))
    for fmt in args.formats:
        if fmt not in FORMATS:
            parser.error(f"unknown format '{fmt}' (choose from {', '.join(FORMATS)})")
    if not args.formats:
        parser.error("--formats is empty")
    args.metrics = list(dict.fromkeys(t.strip() for t in args.metrics.split(",") if t.strip()))
    return args


def main(argv):
    args = parse_args(argv)
    # The same folder given twice would count as two seeds.
    run_dirs = list(dict.fromkeys(args.run_dirs))
    run_dirs = [run for i, run in enumerate(run_dirs)
                if os.path.realpath(run) not in {os.path.realpath(r) for r in run_dirs[:i]}]
    for run in run_dirs:
        path = os.path.join(run, "metrics.jsonl")
        if not os.path.isfile(path):
            raise PlotError(f"{path} not found")

    configs = {run: read_config(run) for run in run_dirs}
    groups = group_runs(run_dirs, configs, args.group_by)
    if args.dump_groups:
        print(json.dumps({label: runs for label, runs in groups}, indent=2))
        return 0

    metrics = {run: read_metrics(run) for run in run_dirs}
    tags = select_metrics(args.metrics, list(metrics.values()))
    os.makedirs(args.out, exist_ok=True)
    for tag in tags:
        fig = plot_metric(tag, groups, metrics, args.width_px, args.height_px)
        for fmt in args.formats:
            path = os.path.join(args.out, f"{tag.replace('/', '__')}.{fmt}")
            save_atomic(fig, path, fmt)
            print(path, flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except PlotError as e:
        print(f"plot: {e}", file=sys.stderr)
        sys.exit(2)
    except OSError as e:  # e.g. OUT_DIR not writable
        print(f"plot: {e.filename}: {e.strerror}" if e.filename else f"plot: {e}", file=sys.stderr)
        sys.exit(2)
