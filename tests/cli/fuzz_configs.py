#!/usr/bin/env python3
"""Config fuzzing: mutate a small valid config at random and check that `rlm train` handles every mutant.

A mutant must either train (exit 0; a run that hits the per-run time limit counts as training) or be refused with
exit 2, exactly one line on stderr that starts with "rlm: error: ", and no run folder. Anything else (exit 1, a
crash, a signal, several lines, a folder left behind by a refused config) is a finding, printed with its mutant.

Usage: tests/cli/fuzz_configs.py RLM_BINARY [--count N] [--seed S] [--timeout SECONDS]
The base config is the resolved config.yaml of a tiny RepeatFirstEasy run (every key present), so a mutation can
hit any key. Standard library only.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

VALUES = ["-1", "0", "1", "2", "0.5", "-0.5", "1e3", "1e39", "-1e39", "1e-40", "nan", ".nan", ".inf", "-.inf",
          "3abc", '""', "''", "[1, 2]", "[]", "{a: 1}", "{}", "true", "no", "null", "~", "2147483648",
          "9223372036854775808", "99999999999", "'unterminated", '"unterminated', '"a/b"', "..", "/abs", '"\\0"',
          "gru", "shm", "ffm", "kf", "stm", "spiking", "popgym/Nope", "popgym/BattleshipEasy",
          "popgym/LabyrinthEscapeEasy", "popgym/PositionOnlyPendulumEasy", "cuda", "auto", "full", "full_and_partial",
          "sine", "relu", "none", "[0]", "[-3]", "[16, 16, 16]", "1.5", "65", "1025", "100000"]


TYPED = {
    "int": ["-1", "0", "1", "2", "3", "7", "65", "1025", "1e3", "100000", "2147483647", "2147483648"],
    "float": ["-1", "0", "1e-40", "1e-8", "0.5", "0.999", "1", "1.0001", "1e3", "3e38", "1e39"],
    "bool": ["true", "false", "yes"],
    "list": ["[1]", "[0]", "[-3]", "[16, 16, 16]", "[]", "[1e3]", "[2147483647]"],
}


def value_type(value):
    if value in ("true", "false"):
        return "bool"
    if value.startswith("["):
        return "list"
    if re.fullmatch(r"-?\d+", value):
        return "int"
    if re.fullmatch(r"-?[\d.]+(e[-+]?\d+)?", value):
        return "float"
    return "str"


def mutate(lines, rng):
    lines = list(lines)
    kind = rng.random()
    value_lines = [i for i, line in enumerate(lines) if re.match(r"^\s+\w+: \S", line)]
    if kind < 0.70:  # replace one or two values
        for _ in range(rng.choice([1, 1, 2])):
            i = rng.choice(value_lines)
            key, old = lines[i].split(":", 1)
            typed = TYPED.get(value_type(old.strip()))
            # Half the time a value of the field's own type, so mutants get past type checks to ranges, cross-field
            # checks and the trainer.
            pool = typed if typed and rng.random() < 0.5 else VALUES
            lines[i] = f"{key}: {rng.choice(pool)}"
    elif kind < 0.78:  # an unknown or misspelt key
        i = rng.choice(value_lines)
        key, value = lines[i].split(":", 1)
        lines.insert(i, f"{key}{rng.choice(['x', '_', 's'])}:{value}")
    elif kind < 0.84:  # a duplicated line
        i = rng.choice(value_lines)
        lines.insert(i, lines[i])
    elif kind < 0.89:  # a deleted line (possibly a section header)
        del lines[rng.randrange(len(lines))]
    elif kind < 0.93:  # a second document
        lines.insert(rng.randrange(len(lines)), "---")
    elif kind < 0.97:  # wrong indentation
        i = rng.choice(value_lines)
        lines[i] = lines[i].lstrip() if rng.random() < 0.5 else "   " + lines[i]
    else:  # cut the file anywhere
        text = "\n".join(lines)
        return text[: rng.randrange(len(text))]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rlm")
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--timeout", type=float, default=20.0)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    rlm = os.path.abspath(args.rlm)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/cli/ -> root
    work = tempfile.mkdtemp(prefix="rlm-fuzz-")
    try:
        tiny = ["experiment.name=base", "experiment.device=cpu", "experiment.torch_threads=1", "env.num_envs=4",
                "algo.ppo.steps_per_env=32", "algo.ppo.minibatch_size=102", "algo.ppo.epochs=1",
                "model.ppo.feature_size=16", "model.ppo.preprocessor_size=16", "model.ppo.head_sizes=[16]",
                "model.memory.hidden_size=16", "algo.total_steps=200", "logging.tensorboard=false",
                "logging.console=false"]
        subprocess.run([rlm, "train", "--config", os.path.join(repo, "configs/gru_repeat_first.yaml"), *tiny],
                       cwd=work, check=True, capture_output=True)
        base_dir = os.path.join(work, "runs", "base")
        base = open(os.path.join(base_dir, os.listdir(base_dir)[0], "config.yaml")).read().splitlines()
        shutil.rmtree(os.path.join(work, "runs"))
        counts = {"trained": 0, "refused": 0, "timed out": 0}
        findings = []
        for n in range(args.count):
            text = mutate(base, rng)
            path = os.path.join(work, "fuzz.yaml")
            with open(path, "w") as f:
                f.write(text)
            try:
                r = subprocess.run([rlm, "train", "--config", path], cwd=work, capture_output=True, text=True,
                                   timeout=args.timeout)
                status, err = r.returncode, r.stderr
            except subprocess.TimeoutExpired:
                counts["timed out"] += 1
                shutil.rmtree(os.path.join(work, "runs"), ignore_errors=True)
                continue
            left = os.path.exists(os.path.join(work, "runs"))
            lines = err.splitlines()
            if status == 0:
                counts["trained"] += 1
            elif status == 2 and len(lines) == 1 and lines[0].startswith("rlm: error: ") and not left:
                counts["refused"] += 1
                if os.environ.get("FUZZ_VERBOSE"):
                    print(lines[0])
            else:
                findings.append((n, status, err.strip()[-300:], left, text))
            shutil.rmtree(os.path.join(work, "runs"), ignore_errors=True)
            for folder in ("/abs", os.path.join(work, "..", "escape")):
                if os.path.isdir(folder) and folder != "/abs":
                    findings.append((n, status, f"wrote outside runs_dir: {folder}", True, text))
        print(f"[fuzz] seed {seed}: {args.count} mutants, {counts['trained']} trained, {counts['refused']} refused "
              f"with one line and exit 2, {counts['timed out']} hit the {args.timeout:g} s limit, "
              f"{len(findings)} findings")
        for n, status, err, left, text in findings[:10]:
            print(f"--- mutant {n}: exit {status}, run folder left: {left}\n{err}\n--- config:\n{text}")
        return 1 if findings else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
