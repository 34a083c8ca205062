#!/usr/bin/env bash
# Bad input to `rlm train` gives exactly one line on stderr naming file, line and key, exit status 2, and no run
# folder. Usage: test_cli_errors.sh PATH_TO_RLM_BINARY
set -uo pipefail
RLM="$1"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
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
expect_error "unknown key" "unknown.yaml:4.*algo.lerning_rate.*did you mean 'algo.ppo.lr'" --config unknown.yaml

printf 'algo:\n  ppo:\n    lr: fast\n' >type.yaml
expect_error "wrong type" "type.yaml:3.*algo.ppo.lr.*expected a number" --config type.yaml

printf 'algo:\n  ppo:\n    gamma: 1.5\n' >range.yaml
expect_error "out of range" "range.yaml:3.*algo.ppo.gamma.*out of range" --config range.yaml

printf 'algo:\n  total_steps: 100\n  lr: 0.1\n' >moved.yaml
expect_error "moved key" "^rlm: error: moved.yaml:3: algo.lr is now algo.ppo.lr$" --config moved.yaml

expect_error "missing file" "config file 'nope.yaml' not found" --config nope.yaml

printf 'algo:\n  lr: [1, 2\n  gamma: 0.9\n' >malformed.yaml
expect_error "malformed yaml" "malformed.yaml:.*malformed YAML" --config malformed.yaml

printf 'env:\n  num_envs: 2\nalgo:\n  ppo:\n    minibatch_size: 512\n' >ok.yaml
expect_error "bad override" "command line: algo.ppo.lr=abc" --config ok.yaml algo.ppo.lr=abc
expect_error "moved key override" "command line: model.head_sizes=\[8\]: model.head_sizes is now model.ppo.head_sizes" \
  --config ok.yaml model.head_sizes=[8]
expect_error "unknown override" "unknown key 'algo.gama'.*did you mean 'algo.ppo.gamma'" --config ok.yaml algo.gama=0.5
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

# Issue 30, items 9, 11, 13 and 17: sizes that cannot fit, paths Linux refuses, wrapper options named by their key.
python3 - <<'PY'
lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
open("bomb.yaml", "w").write("\n".join(lines) + "\n")
PY
expect_error "alias bomb" "bomb.yaml: more than 1000000 YAML nodes (nested aliases?)" --config bomb.yaml
expect_error "rollout larger than memory" \
  "command line: algo.ppo.steps_per_env=1000000000: env.num_envs \* algo.ppo.steps_per_env = 4 \* 1000000000: the rollout needs at least .* GiB, more than this machine's" \
  --config ok.yaml env.num_envs=4 algo.ppo.steps_per_env=1000000000
expect_error "off-policy batch larger than memory" \
  "command line: algo.off_policy.batch_size=1048576: .*one update needs at least .* GiB, more than this machine's" \
  --config "$REPO/configs/offpolicy/sacd_gru_repeat_first.yaml" algo.off_policy.batch_size=1048576 \
  algo.off_policy.sampled_seq_len=100000
expect_error "discrete_action on a Box env" \
  "command line: env.discrete_action=true: popgym-PositionOnlyPendulumEasy-v0: env.discrete_action needs a Discrete" \
  --config ok.yaml env.id=popgym/PositionOnlyPendulumEasy env.discrete_action=true
printf 'env:\n  id: meta/Wind\n  markovian: full\nalgo:\n  ppo:\n    max_seq_len: 100\n' >markovian.yaml
expect_error "markovian full without a state" "markovian.yaml:3: meta-Wind-v0: env.markovian = full needs the env's state" \
  --config markovian.yaml
printf 'experiment:\n  name: ab\xff\n' >utf8.yaml
expect_error "invalid UTF-8 in a file" "utf8.yaml:2: experiment.name = .*invalid UTF-8" --config utf8.yaml
expect_error "runs_dir beyond PATH_MAX" "command line: experiment.runs_dir=d*\.\.\.(5020 characters): experiment.runs_dir is too long for Linux paths (5000 characters" \
  --config ok.yaml "experiment.runs_dir=$(printf 'd%.0s' $(seq 1 5000))"
echo "a file" >afile
expect_error "runs_dir inside a file" "cannot create run folder 'afile/x/t/.*': 'afile' is a file, not a folder" \
  --config ok.yaml experiment.runs_dir=afile/x experiment.name=t
mkdir -p old_run/checkpoints && touch old_run/config.yaml old_run/checkpoints/ckpt_00000003.rlmckpt
expect_error "--resume given a checkpoint file" \
  "--resume: 'old_run/checkpoints/ckpt_00000003.rlmckpt' is a checkpoint file; --resume takes its run folder, 'old_run'" \
  --resume old_run/checkpoints/ckpt_00000003.rlmckpt
# (stdout and stderr go to the parent folder: nothing can be created in a deleted one)
mkdir gone && cd gone && rmdir ../gone
"$RLM" train --config "$work/ok.yaml" >"$work/gone.out" 2>"$work/gone.err"
status=$?
cd "$work"
if [ "$status" -eq 2 ] && [ "$(wc -l <gone.err)" -eq 1 ] && grep -q "the current folder no longer exists" gone.err; then
  echo "ok   deleted working folder: $(cat gone.err)"
else
  echo "FAIL deleted working folder: status $status, $(cat gone.err)"
  failures=$((failures + 1))
fi

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
