#!/usr/bin/env bash
# `rlm sweep` end to end: a tiny sweep (2 memory types × 2 seeds, seconds each) with one run finished and one
# interrupted beforehand resumes (finished skipped, interrupted resumed from its checkpoint); a failing run is reported
# with its error line and a non-zero exit; a bad key is refused before anything starts; the emitted Slurm script
# passes bash -n and its array index runs the right run; --collect writes the table.
# Usage: test_cli_sweep.sh PATH_TO_RLM_BINARY
set -euo pipefail
RLM="$1"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*"; exit 1; }

cat >sweep.yaml <<EOF
name: tiny
configs: $REPO/configs/gru_repeat_first.yaml
overrides:
  experiment.device: cpu
  env.num_envs: 4
  algo.ppo.steps_per_env: 32
  algo.ppo.minibatch_size: 64
  algo.ppo.epochs: 1
  model.ppo.feature_size: 16
  model.ppo.preprocessor_size: 16
  model.ppo.head_sizes: [16]
  model.memory.hidden_size: 16
  checkpoint.every: 1
  logging.console: false
  algo.total_steps: 6400
grid:
  model.memory.type: [gru, ffm]
seeds: 2
EOF

"$RLM" sweep --config sweep.yaml --dry-run >dry.log
cat dry.log
[ "$(grep -c 'rlm train --config' dry.log)" -eq 4 ] || fail "dry run should list 4 runs"
grep -q '^\[2\] gru_repeat_first__model.memory.type=ffm__seed=0: .*model.memory.type=ffm experiment.seed=0$' dry.log ||
  fail "run 2 should be ffm with seed 0"
[ ! -e runs ] || fail "a dry run wrote something"

# Run 0 finished before the sweep starts; run 1 stopped by SIGTERM after its first checkpoint.
"$RLM" sweep --config sweep.yaml --only 0 >only0.log
[ -f runs/sweeps/tiny/runs/gru_repeat_first__model.memory.type=gru__seed=0/done.json ] || fail "run 0 not finished"
run1=runs/sweeps/tiny/runs/gru_repeat_first__model.memory.type=gru__seed=1
"$RLM" sweep --config sweep.yaml --only 1 >only1.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  ls "$run1"/checkpoints/ckpt_*.rlmckpt >/dev/null 2>&1 && break
  sleep 0.05
done
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 143 ] || { cat only1.log; fail "a stopped run should exit 143, got $status"; }
[ ! -f "$run1/done.json" ] || fail "an interrupted run must not be marked done"

"$RLM" sweep --config sweep.yaml --jobs 2 >sweep.log
cat sweep.log
grep -q '4 runs (1 finished before), 2 worker(s)' sweep.log || fail "the finished run should be skipped"
grep -q 'resuming' "runs/sweeps/tiny/logs/gru_repeat_first__model.memory.type=gru__seed=1.log" ||
  fail "the interrupted run should resume from its checkpoint"
[ "$(ls runs/sweeps/tiny/runs/*/done.json | wc -l)" -eq 4 ] || fail "every run should be finished"
grep -q '4 of 4 runs finished' sweep.log || fail "summary line"
"$RLM" sweep --config sweep.yaml >again.log
grep -q '4 runs (4 finished before)' again.log || fail "a finished sweep should start nothing"

# Collect: two groups of two seeds.
"$RLM" sweep --config sweep.yaml --collect >collect.log
cat collect.log
[ "$(wc -l <runs/sweeps/tiny/results.csv)" -eq 3 ] || fail "results.csv should hold a header and 2 groups"
grep -q '^gru_repeat_first,model.memory.type=ffm,charts/episode_return_mean,2,2,' runs/sweeps/tiny/results.csv ||
  fail "ffm group row"
[ "$(wc -l <runs/sweeps/tiny/runs.csv)" -eq 5 ] || fail "runs.csv should hold 4 runs"

# Slurm: the script is valid bash, the array covers the runs, and task 2 trains run 2 (ffm, seed 0).
"$RLM" sweep --config sweep.yaml --emit slurm slurm --partition cpu --time 0:30:00 --gpus 1 --concurrency 2 >emit.log
script=slurm/tiny.sbatch
bash -n "$script" || fail "the Slurm script is not valid bash"
grep -q '^#SBATCH --array=0-3%2$' "$script" || fail "array line"
grep -q '^#SBATCH --partition=cpu$' "$script" || fail "partition line"
grep -q '^#SBATCH --gres=gpu:1$' "$script" || fail "gres line"
grep -q '^#SBATCH --time=0:30:00$' "$script" || fail "time line"
run2=runs/sweeps/tiny/runs/gru_repeat_first__model.memory.type=ffm__seed=0
rm -rf "$run2"
(unset SLURM_ARRAY_TASK_ID; bash "$script" >/dev/null 2>&1) && fail "the script must refuse to run without a task id"
SLURM_ARRAY_TASK_ID=2 bash "$script" >task2.log 2>&1 || { cat task2.log; fail "array task 2 failed"; }
[ -f "$run2/done.json" ] || fail "array task 2 did not train run 2"
grep -q 'type: ffm' "$run2/config.yaml" || fail "run 2 should be ffm"
grep -q 'seed: 0' "$run2/config.yaml" || fail "run 2 should have seed 0"

# A run that fails is reported with its error line; the sweep exits 1.
sed -e 's/^name: tiny/name: broken/' -e 's/model.memory.type: \[gru, ffm\]/env.id: [popgym\/RepeatFirstEasy, popgym\/Nope]/' \
  sweep.yaml >broken.yaml
status=0
"$RLM" sweep --config broken.yaml --jobs 1 >broken.log 2>&1 || status=$?
cat broken.log
[ "$status" -eq 1 ] || fail "a sweep with failed runs should exit 1, got $status"
grep -q 'FAILED gru_repeat_first__env.id=popgym-Nope__seed=0 (exit 2): rlm: error: .*popgym/Nope' broken.log ||
  fail "the failure should name the run and its error"
grep -q '2 of 4 runs finished, 2 FAILED' broken.log || fail "summary with failures"
# The same with the runs as threads of the sweep's process (--in-process): a run's error ends that run alone, with
# the exit status and error line a worker process would have had, in its log and failed.json.
status=0
"$RLM" sweep --config broken.yaml --jobs 2 --in-process --out threads_broken >threads_broken.log 2>&1 || status=$?
cat threads_broken.log
[ "$status" -eq 1 ] || fail "an --in-process sweep with failed runs should exit 1, got $status"
grep -q 'FAILED gru_repeat_first__env.id=popgym-Nope__seed=1 (exit 2): rlm: error: .*popgym/Nope' threads_broken.log ||
  fail "--in-process: the failure should name the run and its error"
grep -q '2 of 4 runs finished, 2 FAILED' threads_broken.log || fail "--in-process: summary with failures"
grep -q 'popgym/Nope' threads_broken/runs/gru_repeat_first__env.id=popgym-Nope__seed=1/failed.json ||
  fail "--in-process: failed.json"

# A worker stopped from outside (SIGTERM: checkpointed, exit 143) is "stopped", not FAILED, and resumes on a rerun;
# one killed outright (SIGKILL) is FAILED with its signal. Either way the sweep exits 1. (Resuming after a stop is
# checked above.)
sed -e 's/^name: tiny/name: ext/' -e 's/algo.total_steps: 6400/algo.total_steps: 6400000/' \
  -e 's/model.memory.type: \[gru, ffm\]/model.memory.type: [gru]/' -e 's/^seeds: 2/seeds: 1/' sweep.yaml >ext.yaml
ext_run=runs/sweeps/ext/runs/gru_repeat_first__model.memory.type=gru__seed=0
stop_worker() {  # SIGNAL: start the sweep, wait for the worker's first checkpoint, signal the worker alone
  status=0
  "$RLM" sweep --config ext.yaml --jobs 1 >ext.log 2>&1 &
  local sweep_pid=$! worker=""
  for _ in $(seq 1 600); do
    worker=$(pgrep -P "$sweep_pid" -f -- "--only 0" || true)
    [ -n "$worker" ] && ls "$ext_run"/checkpoints/ckpt_*.rlmckpt >/dev/null 2>&1 && break
    sleep 0.05
  done
  [ -n "$worker" ] || { kill -KILL "$sweep_pid"; fail "no worker started"; }
  kill "-$1" "$worker"
  wait "$sweep_pid" || status=$?
  cat ext.log
}
stop_worker TERM
[ "$status" -eq 1 ] || fail "a sweep with a stopped run should exit 1, got $status"
grep -q 'stopped gru_repeat_first__model.memory.type=gru__seed=0 (exit 143; its checkpoint is kept)' ext.log ||
  fail "a run stopped from outside should be reported as stopped"
grep -q '0 of 1 runs finished, 1 stopped (rerun the same command to resume them)' ext.log || fail "stopped summary"
grep -q FAILED ext.log && fail "a stopped run is not a failure"
stop_worker KILL
[ "$status" -eq 1 ] || fail "a sweep with a killed run should exit 1, got $status"
grep -q 'FAILED gru_repeat_first__model.memory.type=gru__seed=0: killed by signal 9 (Killed), out of memory?' ext.log ||
  fail "a killed run should be FAILED with its signal"

# A key no config has is refused before anything starts.
sed -e 's/^name: tiny/name: badkey/' -e 's/model.memory.type:/model.memory.typo:/' sweep.yaml >badkey.yaml
status=0
"$RLM" sweep --config badkey.yaml 2>badkey.err || status=$?
[ "$status" -eq 2 ] || fail "a bad key should exit 2, got $status"
# at the sweep file's line that sets it (issue 30, item 17), not at a "command line" the user never typed
grep -q "badkey.yaml:17: model.memory.typo=gru: unknown key 'model.memory.typo' .*(run 0, " badkey.err || { cat badkey.err; fail "bad key message"; }
[ ! -e runs/sweeps/badkey ] || fail "a refused sweep wrote its folder"
# Sweep and paper files are read as strictly as train configs, and a sweep's size is checked before it is expanded
# (issue 30, items 7 and 8): exit 2 naming file:line or the flag, at once.
refuse_file() {  # NAME PATTERN: sweep --config NAME.yaml --dry-run exits 2 with PATTERN
  status=0
  timeout 20 "$RLM" sweep --config "$1" --dry-run >/dev/null 2>refuse.err || status=$?
  [ "$status" -eq 2 ] && grep -q -- "$2" refuse.err || fail "$1: status $status, $(cat refuse.err)"
}
{ cat sweep.yaml; printf 'overrides:\n  algo.ppo.epochs: 2\n'; } >dup.yaml
refuse_file dup.yaml "dup.yaml:[0-9]*: duplicate key 'overrides' (first set on line 3)"
sed 's/^seeds: 2$/seeds: 100000000/' sweep.yaml >manyseeds.yaml
refuse_file manyseeds.yaml "manyseeds.yaml:[0-9]*: seeds: 100000000 seeds: a sweep holds at most 100000 runs"
{ cat sweep.yaml; printf 'random:\n  samples: 2000000000\n  params:\n    algo.ppo.lr: {uniform: [0.001, 0.01]}\n'; } >manysamples.yaml
refuse_file manysamples.yaml "random.samples: 2000000000 samples: a sweep holds at most 100000 runs"
python3 -c "print('grid:\n  algo.ppo.epochs: [' + ','.join(map(str, range(1, 1001))) + ']\n  algo.ppo.gamma: [' + ','.join(str(0.5 + i / 4000) for i in range(1000)) + ']')" >big_grid.part
sed '/^grid:/,/^seeds:/{/^seeds:/!d}' sweep.yaml | cat - big_grid.part >biggrid.yaml
refuse_file biggrid.yaml "biggrid.yaml: the sweep expands to more than 100000 runs"
mkdir -p folder.yaml
refuse_file folder.yaml "sweep file 'folder.yaml' is a folder, not a file"
# Issue 30, items 10, 11, 16 and 17: values, paths and budgets that cannot work, refused with exit 2 and their place.
sed 's/^  model.memory.type: \[gru, ffm\]$/  algo.ppo.lr: [0.1, 0.10]/' sweep.yaml >dupvalue.yaml
refuse_file dupvalue.yaml "dupvalue.yaml:[0-9]*: grid.algo.ppo.lr: lists the value 0.1 twice ('0.1' and '0.10')"
{ cat sweep.yaml; printf 'random:\n  samples: 2\n  params:\n    algo.ppo.lr: {uniform: [0, .inf]}\n'; } >infbound.yaml
refuse_file infbound.yaml "infbound.yaml:[0-9]*: random.params.algo.ppo.lr.uniform: bounds must be finite numbers"
sed 's/^  algo.ppo.epochs: 1$/  algo.ppo.epochs: many/' sweep.yaml >badvalue.yaml
refuse_file badvalue.yaml "badvalue.yaml:8: algo.ppo.epochs=many: expected an integer.* (run 0, "
# A key from before PPO's options moved into algo.ppo names its new place, at its line of the sweep file.
sed 's/^  algo.ppo.epochs: 1$/  algo.epochs: 1/' sweep.yaml >movedkey.yaml
refuse_file movedkey.yaml "movedkey.yaml:8: algo.epochs=1: algo.epochs is now algo.ppo.epochs (run 0, "
refuse_fs() {  # PATTERN ARGS...: rlm sweep ARGS exits 2 with PATTERN
  local pattern="$1"
  shift
  status=0
  timeout 60 "$RLM" sweep --config sweep.yaml "$@" >/dev/null 2>refuse.err || status=$?
  [ "$status" -eq 2 ] && grep -q -- "$pattern" refuse.err || fail "sweep $*: status $status, $(cat refuse.err)"
}
echo "a file" >afile
refuse_fs "cannot create sweep folder 'afile/x/logs': 'afile' is a file, not a folder" --out afile/x
refuse_fs "cannot create --emit slurm folder 'afile': 'afile' is a file, not a folder" --out s_emit --emit slurm afile
refuse_fs "--collect: sweep folder 'never_run' does not exist" --out never_run --collect
# Paper tables: a fake source folder holding one broken copy of shm/table1 at a time.
refuse_paper() {  # NAME PATTERN SED_EXPRESSION: reproduce shm/table1 with paper.yaml edited by SED_EXPRESSION
  rm -rf fake && mkdir -p fake/configs/repro && cp -r "$REPO/configs/repro/shm_table1" fake/configs/repro/
  sed -i "$3" fake/configs/repro/shm_table1/paper.yaml
  status=0
  RLM_SOURCE_DIR="$PWD/fake" timeout 20 "$RLM" reproduce shm/table1 --dry-run >/dev/null 2>refuse.err || status=$?
  [ "$status" -eq 2 ] && [ "$(wc -l <refuse.err)" -eq 1 ] && grep -q -- "$2" refuse.err ||
    fail "paper.yaml $1: status $status, $(cat refuse.err)"
}
refuse_paper "title: []" "shm_table1/paper.yaml:4: title: must be a text" 's/^title: .*/title: []/'
refuse_paper 'sweep: ""' "shm_table1/paper.yaml:9: sweep: must name the table's sweep file" 's/^sweep: .*/sweep: ""/'
refuse_paper "scale: .nan" "shm_table1/paper.yaml:12: scale: must be a finite number above 0" 's/^scale: .*/scale: .nan/'
refuse_paper "malformed" "shm_table1/paper.yaml:[0-9]*: malformed YAML: .*(no other paper table is 'shm/table1'" \
  's/^metric: .*/metric: [unclosed/'
status=0
"$RLM" reproduce shm/table1 --budget 0.001 --dry-run >/dev/null 2>refuse.err || status=$?
[ "$status" -eq 2 ] && grep -q -- "--budget 0.001 is below one PPO iteration (.*env.num_envs × algo.ppo.steps_per_env = 64 × 1024 steps of 15000000); the smallest budget of shm/table1 is 0.005" refuse.err ||
  fail "reproduce --budget 0.001: status $status, $(cat refuse.err)"
status=0
timeout 20 "$RLM" reproduce shm/table1 --seeds 1000000 --dry-run >/dev/null 2>refuse.err || status=$?
[ "$status" -eq 2 ] && grep -q -- "--seeds 1000000: at most 1000 seeds per cell" refuse.err ||
  fail "reproduce --seeds 1000000: status $status, $(cat refuse.err)"

# reproduce --collect on synthetic run folders with known final returns: GRU 0.2, 0.4, 0.6 on RepeatPreviousEasy
# (× 100: 40 ± 20, below the paper's 99.9 ± 0.0); FFM 0.983 for its three seeds (inside 98.4 ± 0.3); SHM not run.
rep=repro
"$RLM" reproduce shm/table1 --budget 0.01 --cells repeat_previous_easy --out "$rep" --dry-run >repro_dry.log
[ "$(grep -c 'algo.total_steps=150000$' repro_dry.log)" -eq 9 ] || fail "the budget should scale 15M steps to 150000"
for seed in 0 1 2; do
  for model in gru ffm; do
    dir="$rep/runs/$model-repeat_previous_easy__seed=$seed"
    mkdir -p "$dir"
    value=0.983
    [ "$model" = gru ] && value=$(echo "0.2 0.4 0.6" | cut -d' ' -f$((seed + 1)))
    printf '{"step": 1000, "charts/episode_return_mean": -0.5}\n{"step": 2000, "charts/episode_return_mean": %s}\n' \
      "$value" >"$dir/metrics.jsonl"
    echo '{}' >"$dir/done.json"
  done
done
RLM_PYTHON= "$RLM" reproduce shm/table1 --budget 0.01 --cells repeat_previous_easy --out "$rep" --collect \
  >repro.log
cat "$rep/reproduction.md"
grep -q '^| gru/repeat_previous_easy | 40.0 ± 20.0 | 40.0 \[.*\] | 3 | 99.9 ± 0.0 | below (budget 0.01) |$' \
  "$rep/reproduction.md" || fail "gru row"
grep -q '^| ffm/repeat_previous_easy | 98.3 ± 0.0 | 98.3 \[98.3, 98.3\] | 3 | 98.4 ± 0.3 | inside (budget 0.01) |$' \
  "$rep/reproduction.md" || fail "ffm row"
grep -q '^| shm/repeat_previous_easy | – | – | 0 | 88.9 ± 11.1 | not run |$' "$rep/reproduction.md" || fail "shm row"
grep -q '^| \*\*GRU (Table 1)\*\* | .* | not run (1 of 12 cells) |$' "$rep/reproduction.md" || fail "aggregate row"
[ "$(grep -c '^| ' "$rep/reproduction.md")" -eq 7 ] || fail "only the chosen cells and the 3 aggregates (+ header)"
grep -q '^gru/repeat_previous_easy,0,3,40,20,20,40,' "$rep/reproduction.csv" || fail "csv row"
# One unreadable metrics.jsonl costs its run, not the table (issue 30, item 12): a NaN token mid-file, and a
# finished run with an empty file, are "corrupt", named, and left out; the other runs are collected.
cp -r "$rep" corrupt_rep
printf '{"step": 1000, "charts/episode_return_mean": NaN}\n{"step": 2000, "charts/episode_return_mean": 0.5}\n' \
  >"corrupt_rep/runs/gru-repeat_previous_easy__seed=0/metrics.jsonl"
: >"corrupt_rep/runs/gru-repeat_previous_easy__seed=1/metrics.jsonl"
RLM_PYTHON= "$RLM" reproduce shm/table1 --budget 0.01 --cells repeat_previous_easy --out corrupt_rep --collect \
  >corrupt.log 2>&1 || fail "collect with a corrupt run: $(cat corrupt.log)"
grep -q 'left out gru-repeat_previous_easy__seed=0: .*metrics.jsonl:1: not a JSON metrics row' corrupt.log &&
  grep -q 'left out gru-repeat_previous_easy__seed=1: .*finished (done.json) but without a metrics row' corrupt.log ||
  fail "corrupt runs should be named: $(cat corrupt.log)"
grep -q '^| gru/repeat_previous_easy | 60.0 ± 0.0 | .* | 1 | ' corrupt_rep/reproduction.md &&
  grep -q '^| ffm/repeat_previous_easy | 98.3 ± 0.0 | ' corrupt_rep/reproduction.md ||
  fail "the other runs should be collected: $(cat corrupt_rep/reproduction.md)"

# The curves are drawn from an argument vector, not a shell line (issue 30, item 6): an --out folder holding quotes
# and a ';' reaches the plotting program as one argument and runs nothing.
evil="o'; touch PWNED; '"
cp -r "$rep" "$evil"
printf '#!/bin/sh\nfor a in "$@"; do echo "$a"; done >>"%s/plot_args.txt"\n' "$PWD" >fakepy
chmod +x fakepy
RLM_PYTHON="$PWD/fakepy" "$RLM" reproduce shm/table1 --budget 0.01 --cells repeat_previous_easy --out "$evil" --collect \
  >evil.log || fail "reproduce --collect into a folder with quotes: $(cat evil.log)"
[ ! -e PWNED ] || fail "a quote in --out ran a command"
grep -qxF "$evil/curves/gru-repeat_previous_easy" plot_args.txt || fail "the plot's --out argument: $(cat plot_args.txt)"

# Slurm options go into the script verbatim, so they are checked first (issue 30, item 6).
expect_refused() {  # PATTERN ARGS...: exit 2 with PATTERN, nothing written
  local pattern="$1"
  shift
  status=0
  "$RLM" sweep --config sweep.yaml --emit slurm refused "$@" 2>refused.err || status=$?
  [ "$status" -eq 2 ] && grep -q -- "$pattern" refused.err && [ ! -e refused ] ||
    fail "sweep --emit slurm $*: status $status, $(cat refused.err)"
}
expect_refused "--partition 'gpu.x0atouch PWNED' holds a control character" --partition $'gpu\ntouch PWNED'
expect_refused "--time 'banana' is not a Slurm time" --time banana
expect_refused "--mem '16 G; ls' is not a Slurm memory size" --mem "16 G; ls"
expect_refused "--account 'a\$(id)' is not a Slurm name" --account 'a$(id)'
printf 'slurm:\n  extra: ["--qos=long\\ntouch PWNED"]\n' >>sweep.yaml
expect_refused "sweep.yaml:[0-9]*: slurm.extra: holds a control character" --time 1:00:00
sed -i '/^slurm:/,$d' sweep.yaml
# A folder with a space: the #SBATCH line quotes it, the shell lines quote it, the script is valid bash.
"$RLM" sweep --config sweep.yaml --emit slurm slurm2 --out "with space" --time 1-12:00:00 >/dev/null ||
  fail "emit into a folder with a space"
bash -n slurm2/tiny.sbatch || fail "the script for a folder with a space is not valid bash"
grep -q '^#SBATCH --output=".*/with space/logs/slurm-%A_%a.log"$' slurm2/tiny.sbatch || fail "quoted --output line"
grep -q -- "--out '.*/with space' --only" slurm2/tiny.sbatch || fail "quoted --out in the exec line"
[ ! -e PWNED ] || fail "a Slurm option ran a command"

# --runs-per-gpu N (issue 33): N workers at once on each visible GPU, each seeing only its own through
# CUDA_VISIBLE_DEVICES. The runs train on the CPU here; what is checked is where the workers are placed: two long runs
# with one per GPU of "3,5", each worker's environment read while it trains, then a SIGTERM to the sweep, which
# reaches both (checkpointed, exit 143).
sed -e 's/^name: ext/name: packed_ext/' -e 's/^seeds: 1/seeds: 2/' ext.yaml >packed_ext.yaml
CUDA_VISIBLE_DEVICES=3,5 "$RLM" sweep --config packed_ext.yaml --runs-per-gpu 1 >packed_ext.log 2>&1 &
sweep_pid=$!
workers=""
for _ in $(seq 1 600); do
  workers=$(pgrep -P "$sweep_pid" -f -- "--only" || true)
  [ "$(echo "$workers" | wc -w)" -eq 2 ] && [ "$(ls runs/sweeps/packed_ext/runs/*/checkpoints/ckpt_*.rlmckpt 2>/dev/null |
    wc -l)" -ge 2 ] && break
  sleep 0.05
done
seen=$(for w in $workers; do tr '\0' '\n' <"/proc/$w/environ" | grep '^CUDA_VISIBLE_DEVICES=' || true; done |
  sort | tr '\n' ' ')
kill -TERM "$sweep_pid"
status=0
wait "$sweep_pid" || status=$?
cat packed_ext.log
[ "$seen" = "CUDA_VISIBLE_DEVICES=3 CUDA_VISIBLE_DEVICES=5 " ] || fail "one worker on each GPU, got: $seen"
grep -q '2 runs (0 finished before), 2 worker(s), 1 on each of GPU 3, 5' packed_ext.log || fail "packed header line"
grep -q 'started gru_repeat_first__model.memory.type=gru__seed=0 (1/2) on GPU 3$' packed_ext.log || fail "run 0 on GPU 3"
grep -q 'started gru_repeat_first__model.memory.type=gru__seed=1 (2/2) on GPU 5$' packed_ext.log || fail "run 1 on GPU 5"
[ "$status" -eq 143 ] && [ "$(grep -c 'exit 143; its checkpoint is kept' packed_ext.log)" -eq 2 ] ||
  fail "a SIGTERM to a packed sweep should stop both workers through checkpoints (status $status)"
# Packed Slurm array: 4 runs, 2 per GPU and 1 GPU a task: 2 tasks; task 1 trains runs 2 and 3 (ffm) as two workers.
"$RLM" sweep --config sweep.yaml --out packed --emit slurm slurm3 --runs-per-gpu 2 --gpus 1 >emit3.log
cat emit3.log
script=slurm3/tiny.sbatch
bash -n "$script" || fail "the packed Slurm script is not valid bash"
grep -q '^#SBATCH --array=0-1$' "$script" || fail "packed array line"
grep -q '^#SBATCH --cpus-per-task=2$' "$script" || fail "packed tasks ask for each run's threads"
grep -q -- '--runs-per-gpu 2 --only "$((task \* 2))-$((task \* 2 + 1))"$' "$script" || fail "packed exec line"
SLURM_ARRAY_TASK_ID=1 CUDA_VISIBLE_DEVICES=0 bash "$script" >task1.log 2>&1 || { cat task1.log; fail "packed task 1"; }
cat task1.log
grep -q 'tiny: 2 to 3 of 4 runs (0 finished before), 2 worker(s), 2 on each of GPU 0' task1.log ||
  fail "packed task header"
grep -q '2 of 2 (runs 2 to 3) runs finished' task1.log || fail "packed task summary"
[ "$(ls packed/runs/*/done.json | wc -l)" -eq 2 ] && [ -f packed/runs/gru_repeat_first__model.memory.type=ffm__seed=0/done.json ] ||
  fail "packed task 1 should train runs 2 and 3 only: $(ls packed/runs/*/done.json)"
# --in-process: the same placement with the runs as threads of the sweep's own process (no worker processes), each
# writing to its own log; a SIGTERM to the process stops both through checkpoints.
sed -e 's/^name: packed_ext/name: threads_ext/' packed_ext.yaml >threads_ext.yaml
CUDA_VISIBLE_DEVICES=3,5 "$RLM" sweep --config threads_ext.yaml --runs-per-gpu 1 --in-process >threads_ext.log 2>&1 &
sweep_pid=$!
for _ in $(seq 1 600); do
  [ "$(ls runs/sweeps/threads_ext/runs/*/checkpoints/ckpt_*.rlmckpt 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.05
done
children=$(pgrep -P "$sweep_pid" || true)
kill -TERM "$sweep_pid"
status=0
wait "$sweep_pid" || status=$?
cat threads_ext.log
[ -z "$children" ] || fail "--in-process started worker processes: $children"
grep -q '2 runs (0 finished before), 2 thread(s) of this process, 1 on each of GPU 3, 5' threads_ext.log ||
  fail "--in-process header line"
grep -q 'started gru_repeat_first__model.memory.type=gru__seed=1 (2/2) on GPU 5$' threads_ext.log ||
  fail "--in-process: run 1 on GPU 5"
[ "$status" -eq 143 ] && [ "$(grep -c 'exit 143; its checkpoint is kept' threads_ext.log)" -eq 2 ] ||
  fail "a SIGTERM to an --in-process sweep should stop both runs through checkpoints (status $status)"
for log in runs/sweeps/threads_ext/logs/*.log; do
  grep -q '^\[train\] stopped at .* env steps' "$log" || fail "$log: the run's own messages belong in its log"
done
grep -q '\[train\]' threads_ext.log && fail "--in-process: a run's messages leaked into the sweep's output"
# Packed array tasks pass --in-process on.
"$RLM" sweep --config sweep.yaml --out packed_threads --emit slurm slurm4 --runs-per-gpu 2 --in-process >/dev/null
grep -q -- '--runs-per-gpu 2 --in-process --only "$((task \* 2))-$((task \* 2 + 1))"$' slurm4/tiny.sbatch ||
  fail "packed --in-process exec line"
# experiment.torch_threads 0 in a sweep: each worker sizes torch's pool to its share of the CPUs (those it may use,
# over the workers running at once: RLM_CPU_SHARE), not to every CPU, which would oversubscribe them N-fold.
sed -e 's/^name: tiny/name: share/' -e 's/^  experiment.device: cpu$/  experiment.device: cpu\n  experiment.torch_threads: 0/' \
  sweep.yaml >share.yaml
"$RLM" sweep --config share.yaml --jobs 2 >share.log || { cat share.log; fail "the torch_threads 0 sweep"; }
want=$(($(nproc) / 2))
[ "$want" -ge 1 ] || want=1
for log in runs/sweeps/share/logs/*.log; do
  grep -qx "\[train\] $want torch thread(s)" "$log" || fail "$log: want $want torch threads, $(grep 'torch thread' "$log")"
done
# And threads of one process: the same share each.
"$RLM" sweep --config share.yaml --jobs 2 --in-process --out share_threads >share_threads.log ||
  { cat share_threads.log; fail "the torch_threads 0 --in-process sweep"; }
for log in share_threads/logs/*.log; do
  grep -qx "\[train\] $want torch thread(s)" "$log" || fail "$log: want $want torch threads, $(grep 'torch thread' "$log")"
done
expect_usage_error() {  # PATTERN ARGS...: exit 2 with PATTERN
  local pattern="$1"
  shift
  status=0
  "$RLM" sweep --config sweep.yaml --out usage "$@" 2>usage.err || status=$?
  [ "$status" -eq 2 ] && grep -q -- "$pattern" usage.err || fail "sweep $*: status $status, $(cat usage.err)"
}
expect_usage_error "--runs-per-gpu must be at least 1" --runs-per-gpu 0
expect_usage_error "--jobs and --runs-per-gpu both" --runs-per-gpu 2 --jobs 2
CUDA_VISIBLE_DEVICES="" expect_usage_error "--runs-per-gpu 1: no GPU is visible" --runs-per-gpu 1
expect_usage_error "--only 2-1: not a run index I or a range of them A-B" --only 2-1
expect_usage_error "--only 4-5: the sweep has 4 runs (0 to 3)" --only 4-5
# Threads of one process share torch's thread count: runs that ask for different ones are refused before any starts.
sed -e 's/^name: tiny/name: mixed/' -e 's/model.memory.type: \[gru, ffm\]/experiment.torch_threads: [1, 2]/' \
  sweep.yaml >mixed.yaml
status=0
"$RLM" sweep --config mixed.yaml --jobs 2 --in-process --out mixed 2>mixed.err || status=$?
[ "$status" -eq 2 ] && grep -q -- "--in-process: the runs share one process, but run 0 (.*) has experiment.torch_threads = 1 and run 2 (.*) has 2" mixed.err ||
  fail "mixed torch_threads --in-process: status $status, $(cat mixed.err)"
[ ! -e mixed/runs ] || fail "a refused --in-process sweep started runs"
echo "cli sweep ok"
