#!/usr/bin/env bash
# CUDA tests without a GPU must be reported as skipped by ctest, never as passed: every test whose name says CUDA
# carries the skip pattern, and running one here gives "Skipped" when torch sees no GPU (and passes where one is).
# Usage: test_ctest_skips.sh BUILD_DIR
set -euo pipefail
BUILD="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ctest --test-dir "$BUILD" --show-only=json-v1 >"$work/tests.json"
python3 - "$work/tests.json" <<'PY'
import json, sys
tests = json.load(open(sys.argv[1]))["tests"]
cuda = [t for t in tests if "CUDA" in t["name"]]
assert len(cuda) >= 3, f"expected the CUDA tests to be registered, found {[t['name'] for t in cuda]}"
for t in cuda:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    skip = props.get("SKIP_REGULAR_EXPRESSION", [])
    skip = skip if isinstance(skip, list) else [skip]
    assert "no CUDA device: skipped" in skip, f"{t['name']}: no skip pattern, properties {props}"
print(f"{len(cuda)} CUDA tests carry the skip pattern")
PY

ctest --test-dir "$BUILD" -R "linear_scan on CUDA" >"$work/run.txt" 2>&1 || true
cat "$work/run.txt"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  grep -q "Passed" "$work/run.txt" || { echo "FAIL: with a GPU the CUDA test should pass"; exit 1; }
else
  grep -q "Skipped" "$work/run.txt" || { echo "FAIL: without a GPU the CUDA test must be reported as skipped"; exit 1; }
fi
echo "ctest skip reporting ok"
