#!/usr/bin/env bash
# The Python of the repository (the scripts package and the Python tests) passes ruff with ruff.toml.
# Usage: check_python.sh REPO_ROOT
set -euo pipefail
cd "$1"
ruff=.venv/bin/ruff
[ -x "$ruff" ] || { echo "no $ruff (scripts/setup.sh installs it): skipped"; exit 77; }
"$ruff" check --no-cache --quiet .
echo "ruff: $(find scripts tests python -name '*.py' | wc -l) Python files clean"
