#!/usr/bin/env bash
# Bad input to `rlm train` gives exactly one line on stderr naming file, line and key, exit status 2, and no run
# folder. Usage: test_cli_errors.sh PATH_TO_RLM_BINARY
set -uo pipefail
RLM="$1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

expect_error() {  # expect_error NAME PATTERN ARGS...
  local name="$1" pattern="$2"
  shift 2
  "$RLM" train "$@" >stdout.txt 2>stderr.txt
  local status=$?
  local lines
  lines=$(wc -l <stderr.txt)
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$pattern" stderr.txt || [ -e runs ]; then
    echo "FAIL $name: status=$status lines=$lines runs_exists=$([ -e runs ] && echo yes || echo no)"
    echo "  stderr: $(cat stderr.txt)"
    echo "  expected pattern: $pattern"
    failures=$((failures + 1))
  else
    echo "ok   $name: $(cat stderr.txt)"
  fi
  rm -rf runs
}

printf 'experiment:\n  name: t\nalgo:\n  lerning_rate: 0.1\n' >unknown.yaml
expect_error "unknown key" "unknown.yaml:4.*algo.lerning_rate.*did you mean 'algo.lr'" --config unknown.yaml

printf 'algo:\n  lr: fast\n' >type.yaml
expect_error "wrong type" "type.yaml:2.*algo.lr.*expected a number" --config type.yaml

printf 'algo:\n  gamma: 1.5\n' >range.yaml
expect_error "out of range" "range.yaml:2.*algo.gamma.*out of range" --config range.yaml

expect_error "missing file" "config file 'nope.yaml' not found" --config nope.yaml

printf 'algo:\n  lr: [1, 2\n  gamma: 0.9\n' >malformed.yaml
expect_error "malformed yaml" "malformed.yaml:.*malformed YAML" --config malformed.yaml

printf 'env:\n  num_envs: 2\nalgo:\n  minibatch_size: 512\n' >ok.yaml
expect_error "bad override" "command line: algo.lr=abc" --config ok.yaml algo.lr=abc
expect_error "unknown override" "unknown key 'algo.gama'.*did you mean 'algo.gamma'" --config ok.yaml algo.gama=0.5
expect_error "unknown env id" "popgym/RepeatFirstEsy" --config ok.yaml env.id=popgym/RepeatFirstEsy
expect_error "no config" "exactly one of --config" 

# bf16 products on a CPU without them, on every machine: RLM_MAX_CPU_ISA=avx2 hides AVX-512 and its bf16 from rlm.
printf 'experiment:\n  cpu_matmul: bf16\n' >bf16.yaml
RLM_MAX_CPU_ISA=avx2 expect_error "bf16 without AVX512-BF16" \
  "bf16.yaml:2.*experiment.cpu_matmul = 'bf16' needs a CPU with AVX512-BF16 or AMX-BF16" --config bf16.yaml
RLM_MAX_CPU_ISA=sse4 expect_error "unknown RLM_MAX_CPU_ISA" "RLM_MAX_CPU_ISA = 'sse4'.*baseline, avx2 or avx512" \
  --config ok.yaml

# An empty config would train every default for 15M steps; a device would be read forever (issue 30, items 15, 17).
: >empty.yaml
expect_error "empty config" "config file 'empty.yaml' is empty" --config empty.yaml
printf '# only a comment\n\n' >comments.yaml
expect_error "comments only" "config file 'comments.yaml' is empty" --config comments.yaml
expect_error "a device" "config file '/dev/zero' is a device, not a file" --config /dev/zero

# --help: the usage on stdout, exit 0, for rlm and for each command (issue 30, item 15).
for args in "--help" "train --help" "sweep --help" "bench sac --help" "reproduce -h"; do
  want="^  ${args%% *} "
  [ "$args" = "--help" ] && want="^usage: rlm <command>"
  # shellcheck disable=SC2086
  if "$RLM" $args >help.txt 2>help.err && [ ! -s help.err ] && grep -q -e "$want" help.txt; then
    echo "ok   rlm $args: $(head -1 help.txt)"
  else
    echo "FAIL rlm $args: status $?, $(cat help.err)"
    failures=$((failures + 1))
  fi
done

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI error case(s) failed"
  exit 1
fi
echo "all CLI error cases passed"
