#!/usr/bin/env bash
# Idempotent set-up: Debian packages, then the project venv (.venv) with the official torch wheel (LibTorch comes
# from it) and tensorboard (used by a test to read our event files back). Takes well under 5 s when all is there.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(cmake ninja-build g++ python3 python3-venv libyaml-cpp-dev nlohmann-json3-dev libfmt-dev catch2
  libbox2d-dev zlib1g-dev munge slurmctld slurmd slurm-client clang-format python3-dev)
# clang-format (14 on Debian 12): the suite checks that every C++ file is formatted (tests/lint/check_format.sh).
# munge, slurmctld, slurmd, slurm-client: the one-node Slurm that tests/cli/test_cli_slurm.sh starts to run an
# emitted job array (nothing is started at install: the test runs its own daemons with their own config).
# popgym and mazelib: the reference package, for scripts/record_popgym.py and the Python side of the env benchmark.
# matplotlib: learning curves (`./rlm plot`, scripts/plot_runs.py).
# pyyaml: run folders' config.yaml for plot_runs.py. ruff: the Python lint of the suite (tests/lint/check_python.sh).
# python3-dev, nanobind, scikit-build-core, gymnasium, pytest: the Python package (python/), built with the rest and
# tested by the suite (tests/python); sb3-contrib: a Python trainer from PyPI on its envs (tests/python/test_sb3.py).
PYTHON_REQUIREMENTS="torch==2.11.0 tensorboard==2.21.0 popgym==1.0.7 mazelib==0.9.16 matplotlib==3.10.9 pyyaml==6.0.4"
PYTHON_REQUIREMENTS+=" ruff==0.17.6 gymnasium==1.4.0 nanobind==3.1.0 scikit-build-core==1.1.2 pytest==9.2.0"
PYTHON_REQUIREMENTS+=" stable-baselines3==2.9.2 sb3-contrib==2.9.2"

missing=()
while read -r pkg status; do
  [ "$status" = "installed" ] || missing+=("$pkg")
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${APT_PACKAGES[@]}" 2>/dev/null || true)
for pkg in "${APT_PACKAGES[@]}"; do  # dpkg-query prints nothing for packages it has never heard of
  dpkg-query -W "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

stamp=.venv/.rlm-requirements
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$PYTHON_REQUIREMENTS" ]; then
  # Prefer the system python3 (Debian's, with python3-venv) unless another is on PATH first.
  echo "[setup] creating .venv with $PYTHON_REQUIREMENTS (about 3 GB with torch's CUDA libraries)"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  # shellcheck disable=SC2086
  .venv/bin/python -m pip install -q $PYTHON_REQUIREMENTS
  echo "$PYTHON_REQUIREMENTS" > "$stamp"
fi
