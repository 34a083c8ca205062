#!/usr/bin/env bash
# `rlm bench --concurrent N` (issue 33): besides each case alone, N processes of it at once (`rlm bench ... --case I`)
# whose env steps/s are summed; the figures are not judged (timing lives in benchmarks, never in tests), only that
# the N runs ran, each reported a rate and the sum is theirs. `rlm bench-memory --profile`'s table. And the flags'
# usage errors.
# Usage: test_cli_bench.sh PATH_TO_RLM_BINARY
set -uo pipefail
RLM="$1"
PYTHON="${RLM_PYTHON:-python3}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

if "$RLM" bench --quick --concurrent 2 --json bench.json >bench.txt 2>bench.err; then
  cat bench.txt
  grep -q '^  2 at once, together .*x one run$' bench.txt && ok "the aggregate row" || fail "no aggregate row"
  "$PYTHON" - bench.json <<'PY' && ok "the JSON holds both runs' rates and their sum" || fail "bench.json: $(cat bench.json)"
import json, sys
results = json.load(open(sys.argv[1]))["results"]
together = results[0]["concurrent"]
assert len(results) == 1 and together["runs"] == 2 and len(together["each"]) == 2, together
assert all(r > 0 for r in together["each"]) and abs(sum(together["each"]) - together["env_steps_per_second"]) < 1e-6
assert abs(together["relative_to_one_run"] - together["env_steps_per_second"] / results[0]["env_steps_per_second"]) < 1e-9
PY
else
  fail "rlm bench --quick --concurrent 2: $(cat bench.err)"
fi

# `rlm bench-memory --profile K`: each backend's K costliest operators (on a GPU: kernels) of one forward+backward.
if "$RLM" bench-memory --only gru --sequences 2 --steps 8 --profile 3 --json memory.json >memory.txt 2>memory.err; then
  grep -q '^  profile of one fwd+bwd: wall .* ms, device busy .* operator calls$' memory.txt &&
    [ "$(grep -c '^    aten::\|^    mkldnn::\|^    torch::' memory.txt)" -eq 3 ] &&
    ok "bench-memory --profile 3: three operators" || fail "bench-memory --profile: $(cat memory.txt)"
  "$PYTHON" - memory.json <<'PY' && ok "bench-memory's JSON holds the profile" || fail "memory.json: $(cat memory.json)"
import json, sys
profile = json.load(open(sys.argv[1]))["backends"][0]["profile"]
assert len(profile["top"]) == 3 and profile["calls"] >= sum(r["calls"] for r in profile["top"]), profile
assert all(r["total_us"] >= 0 for r in profile["top"]) and profile["busy_us"] > 0, profile
PY
else
  fail "rlm bench-memory --profile: $(cat memory.err)"
fi

expect_usage() {  # PATTERN ARGS...: exit 2 with PATTERN on stderr
  local pattern="$1"
  shift
  "$RLM" bench "$@" >usage.out 2>usage.err
  local status=$?
  [ "$status" -eq 2 ] && grep -q -- "$pattern" usage.err && ok "bench $*: $(cat usage.err)" ||
    fail "bench $*: status $status, $(cat usage.err)"
}
expect_usage "--concurrent N: N runs at once, at least 2" --quick --concurrent 1
expect_usage "--concurrent 0: not a count from 1 to 1024" --quick --concurrent 0
expect_usage "--paper goes with --backends" --quick --paper
expect_usage "--case 1: not a case index (0 to 0)" --quick --case 1
expect_usage "--case runs one case in this process" --quick --case 0 --concurrent 2

[ "$failures" -eq 0 ] && echo "all bench CLI checks passed" || echo "$failures bench CLI check(s) failed"
[ "$failures" -eq 0 ]
