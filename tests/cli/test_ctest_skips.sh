#!/usr/bin/env bash
# Tests that cannot run on this machine must be reported as skipped by ctest, never as passed:
# - every test whose name says CUDA carries the skip pattern, and one gives "Skipped" when torch sees no GPU (and
#   passes where one is);
# - the bf16 tests carry it too, and one gives "Skipped" on a CPU without oneDNN bf16 products (no AVX-512) and
#   passes on one with AVX512-BF16;
# - the per-level runs of the SIMD kernels' tests skip the levels this CPU lacks and run the others.
# Usage: test_ctest_skips.sh BUILD_DIR
set -euo pipefail
BUILD="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ctest --test-dir "$BUILD" --show-only=json-v1 >"$work/tests.json"
python3 - "$work/tests.json" <<'PY'
import json, re, sys
tests = json.load(open(sys.argv[1]))["tests"]
def skip_patterns(t):
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    skip = props.get("SKIP_REGULAR_EXPRESSION", [])
    return skip if isinstance(skip, list) else [skip]
def check(kind, names, message):
    found = [t for t in tests if any(n in t["name"] for n in names)]
    assert len(found) >= 3, f"expected the {kind} tests to be registered, found {[t['name'] for t in found]}"
    for t in found:
        assert any(re.search(p, message) for p in skip_patterns(t)), f"{t['name']}: no skip pattern for {message!r}"
    print(f"{len(found)} {kind} tests carry the skip pattern")
check("CUDA", ["CUDA"], "no CUDA device: skipped (runs in scripts/gpu_check.sh)")
check("bf16", ["bf16"], "oneDNN has no bf16 products on this CPU: skipped")
check("per-level SIMD", ["simd_clones."], "avx512 is not on this CPU: skipped")
PY

outcome() {  # the ctest result of the one test matching $1: Passed, Skipped or Failed
  ctest --test-dir "$BUILD" -R "$1" >"$work/run.txt" 2>&1 || true
  cat "$work/run.txt" >&2
  if grep -q "Skipped" "$work/run.txt"; then echo Skipped; elif grep -q "Passed" "$work/run.txt"; then echo Passed; else echo Failed; fi
}
expect() {  # expect TEST_REGEX OUTCOME...: the test's outcome is one of those given
  local got
  got=$(outcome "$1")
  for want in "${@:2}"; do [ "$got" = "$want" ] && return 0; done
  echo "FAIL: '$1' gave $got, expected ${*:2}"
  exit 1
}

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
  expect "linear_scan on CUDA" Passed
else
  expect "linear_scan on CUDA" Skipped
fi

# oneDNN has bf16 products natively with AVX512-BF16, emulated with other AVX-512 (or AVX2-VNNI-2), none without.
flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
without() {  # $1 less the flags matching the regex $2
  echo " $(echo "$1" | tr ' ' '\n' | grep -vE "$2" | tr '\n' ' ') "
}
if [ "${RLM_MAX_CPU_ISA:-}" = avx2 ] || [ "${RLM_MAX_CPU_ISA:-}" = baseline ]; then  # run as a CPU without AVX-512
  flags=$(without "$flags" '^(avx512|amx|avx_ne_convert)')
fi
# What oneDNN may use: less what ONEDNN_MAX_CPU_ISA caps by hand (the AVX2 suite run on an AVX-512 machine sets it to
# AVX2). Our own SIMD kernels below are not capped by it.
onednn_flags=$flags
case "$(echo "${ONEDNN_MAX_CPU_ISA:-}" | tr '[:lower:]' '[:upper:]')" in
  "" | ALL | DEFAULT | AVX512_CORE_BF16 | AVX512_CORE_FP16 | AVX10_* | AVX512_CORE_AMX*) ;;
  AVX512_CORE | AVX512_CORE_VNNI) onednn_flags=$(without "$flags" '^(avx512_bf16|amx)') ;;
  AVX2_VNNI_2) onednn_flags=$(without "$flags" '^(avx512|amx)') ;;
  *) onednn_flags=$(without "$flags" '^(avx512|amx|avx_ne_convert)') ;;
esac
case "$onednn_flags" in
  *" avx512_bf16 "*) expect "bf16 products follow in-place changes" Passed ;;
  *" avx512f "* | *" avx_ne_convert "*) expect "bf16 products follow in-place changes" Passed Skipped ;;
  *) expect "bf16 products follow in-place changes" Skipped ;;
esac

expect "simd_clones.baseline.scan" Passed
case "$flags" in
  *" avx512f "*) expect "simd_clones.avx512.scan" Passed Skipped ;;  # x86-64-v4 needs CD, BW, DQ and VL too
  *) expect "simd_clones.avx512.scan" Skipped ;;
esac
echo "ctest skip reporting ok"
