#!/usr/bin/env bash
# `pip install ./python` as a user runs it: build the wheel (scikit-build-core and nanobind from the given Python's
# environment, no build isolation, so no network), install it into an empty folder, and run the package's tests
# against that install instead of build/python.
# Usage: test_wheel.sh PYTHON REPO_ROOT
set -euo pipefail
python=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" -m pip wheel -q --no-build-isolation --no-deps "$root/python" -w "$work/wheel" -C build-dir="$work/build"
"$python" -m pip install -q --no-deps --target "$work/site" "$work"/wheel/rlm_envs-*.whl
cd "$work"
PYTHONPATH="$work/site" "$python" -c 'import rlm_envs, sys; sys.exit(rlm_envs.__file__.startswith(sys.argv[1]) is False)' \
  "$work/site"
PYTHONPATH="$work/site" RLM_SOURCE_DIR="$root" "$python" -m pytest -q -p no:cacheprovider \
  "$root"/tests/python/test_{gymnasium_checks,errors,seeding}.py
