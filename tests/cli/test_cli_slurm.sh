#!/usr/bin/env bash
# The Slurm job array that `rlm sweep --emit slurm` writes, run on a real Slurm (issue 30): a one-node cluster of
# munged, slurmctld and slurmd that this test starts on localhost with its own config, key, ports and folders, and
# stops again by pid (nothing else on the machine is touched).
# - a 2x2 sweep's array is submitted, runs, and `--collect` gives its table;
# - `scancel --batch --signal=TERM` to a running array task makes the run checkpoint and stop; resubmitting the same script
#   skips the finished runs and resumes that one, which ends bitwise equal to an uninterrupted run of it;
# - a packed array (--runs-per-gpu 2) trains two runs per task;
# Where the daemons cannot start (no packages, not root), it reports a skip with the reason (exit 77), never a pass.
# Usage: test_cli_slurm.sh PATH_TO_RLM_BINARY
set -uo pipefail
RLM="$1"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON="${RLM_PYTHON:-python3}"
skip() {
  echo "SKIP: $*"
  exit 77
}
for tool in munged munge slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/setup.sh installs munge, slurmctld, slurmd and slurm-client)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd starts jobs as root only here; run as root (CI does)"

work=$(mktemp -d)
export SLURM_CONF="$work/slurm.conf"
stop_daemons() {
  scancel --quiet --user=root 2>/dev/null
  for pidfile in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge/munged.pid"; do
    [ -s "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
}
trap 'stop_daemons; pkill -KILL -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
ok() { echo "ok   $*"; }

# ---- the cluster ----
free_port() { "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
mkdir -p state spool munge
chmod 700 munge
head -c 1024 /dev/urandom >munge/munge.key
chmod 600 munge/munge.key
munged --force --socket="$work/munge/munge.sock" --key-file="$work/munge/munge.key" \
  --pid-file="$work/munge/munged.pid" --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed" ||
  skip "munged does not start: $(tail -n 2 munge/munged.log 2>/dev/null)"
host=$(hostname -s)
memory_mb=$(awk '/MemTotal/ { print int($2 / 1024) - 512 }' /proc/meminfo)
plugins=$(dirname "$(find /usr/lib -name 'select_cons_tres.so' -path '*slurm*' 2>/dev/null | head -n 1)")
[ -d "$plugins" ] || skip "no Slurm plugin folder with select_cons_tres.so under /usr/lib"
cat >slurm.conf <<EOF
ClusterName=rlmtest
SlurmctldHost=$host
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
PluginDir=$plugins
NodeName=$host CPUs=$(nproc) RealMemory=$memory_mb State=UNKNOWN
PartitionName=rlm Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -i >/dev/null 2>&1 || skip "slurmctld does not start: $(tail -n 2 slurmctld.log 2>/dev/null)"
slurmd >/dev/null 2>&1 || skip "slurmd does not start: $(tail -n 2 slurmd.log 2>/dev/null)"
for _ in $(seq 1 100); do
  sinfo -h -o %t 2>/dev/null | grep -qx idle && break
  sleep 0.2
done
sinfo -h -o %t 2>/dev/null | grep -qx idle ||
  skip "the node never became idle: $(sinfo 2>&1 | tail -n 1); $(tail -n 2 slurmctld.log slurmd.log 2>&1)"
echo "[slurm] one-node cluster up on $host ($(sinfo -h -o '%c CPUs'))"

# ---- the sweep: 2 learning rates x 2 seeds of a tiny GRU on RepeatFirst, ~200 iterations (~10 s) each ----
cat >S.yaml <<EOF
name: slurm_test
configs: $REPO/configs/gru_repeat_first.yaml
overrides:
  experiment.device: cpu
  experiment.torch_threads: 1
  env.num_envs: 4
  algo.ppo.steps_per_env: 32
  algo.ppo.minibatch_size: 64
  algo.ppo.epochs: 2
  model.ppo.feature_size: 16
  model.ppo.preprocessor_size: 16
  model.ppo.head_sizes: [16]
  model.memory.hidden_size: 16
  logging.tensorboard: false
  checkpoint.every: 1
  algo.total_steps: 40000
grid:
  algo.ppo.lr: [0.0005, 0.001]
seeds: 2
EOF
# wait_for_array JOB_ID SECONDS: until no task of the job is pending or running.
wait_for_array() {
  for _ in $(seq 1 $(($2 * 5))); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}
rows() { [ -f "$1/metrics.jsonl" ] && wc -l <"$1/metrics.jsonl" || echo 0; }

"$RLM" sweep --config S.yaml --out D --emit slurm jobs >emit.log 2>&1 || fail "emit: $(cat emit.log)"
script=jobs/slurm_test.sbatch
job=$(sbatch --parsable "$script" 2>sbatch.err) || fail "sbatch refused the emitted script: $(cat sbatch.err)"
echo "[slurm] submitted array job $job"
# The first task, once it has trained a few iterations (and checkpointed them): SIGTERM to it alone.
first=$(python3 -c 'import json; print(json.load(open("D/sweep.json"))["runs"][0]["id"])')
for _ in $(seq 1 600); do
  [ "$(rows "D/runs/$first")" -ge 3 ] && break
  sleep 0.1
done
if [ "$(rows "D/runs/$first")" -ge 3 ] && [ ! -f "D/runs/$first/done.json" ]; then
  # --batch: the task's batch shell is rlm itself (the script execs it) and it has no job steps, which is all a
  # plain --signal reaches (scancel then retries until the task ends).
  # Its exit status says nothing: after the signal it retries while the task winds down, and then reports the
  # task "already completing". What counts is the run's checkpoint, below.
  scancel -v --batch --signal=TERM "${job}_0" >scancel.err 2>&1
  echo "[slurm] scancel --batch --signal=TERM to task 0 at metrics row $(rows "D/runs/$first")"
else
  fail "task 0 never trained 3 iterations, or finished first: $(ls D/runs/$first 2>&1); $(cat D/logs/*_0.log 2>&1 | tail -n 3)"
fi
wait_for_array "$job" 300 || fail "the array did not finish within 300 s: $(squeue)"
log0=$(ls D/logs/slurm-"${job}"_0.log 2>/dev/null)
if grep -q "\[train\] stopped at .* the newest checkpoint is kept" "$log0" 2>/dev/null && [ ! -f "D/runs/$first/done.json" ] &&
  ls "D/runs/$first/checkpoints/"*.rlmckpt >/dev/null 2>&1; then
  ok "task 0 checkpointed and stopped on the SIGTERM"
else
  fail "task 0 after SIGTERM: $(tail -n 8 "$log0" 2>&1); $(ls "D/runs/$first" 2>&1); $(cat scancel.err)"
fi
finished=$(ls D/runs/*/done.json 2>/dev/null | wc -l)
[ "$finished" -eq 3 ] && ok "the other 3 tasks finished" || fail "$finished runs finished, want 3: $(tail -n 2 D/logs/*.log)"

job2=$(sbatch --parsable "$script" 2>sbatch.err) || fail "sbatch (resubmission): $(cat sbatch.err)"
wait_for_array "$job2" 300 || fail "the resubmitted array did not finish within 300 s"
finished=$(ls D/runs/*/done.json 2>/dev/null | wc -l)
[ "$finished" -eq 4 ] && ok "the resubmitted array finished all 4 runs" || fail "$finished of 4 runs finished"
grep -q "\[train\] resuming" "D/logs/slurm-${job2}_0.log" && ok "task 0 resumed from its checkpoint" ||
  fail "task 0 did not resume: $(head -n 3 "D/logs/slurm-${job2}_0.log" 2>&1)"
grep -q "is finished; skipped" "D/logs/slurm-${job2}_1.log" &&
  ok "a finished task is skipped on resubmission" || fail "task 1 on resubmission: $(cat "D/logs/slurm-${job2}_1.log")"

# The resumed run against the same run trained without interruption (the same worker command, locally).
"$RLM" sweep --config S.yaml --out REF --only 0 >ref.log 2>&1 || fail "the uninterrupted reference run: $(tail -n 2 ref.log)"
"$PYTHON" - "D/runs/$first/metrics.jsonl" "REF/runs/$first/metrics.jsonl" <<'PY' && ok "the resumed run's metrics equal the uninterrupted run's, bit for bit" || fail "resumed run differs from the uninterrupted one"
import json, sys
timing = {"charts/steps_per_second", "charts/rollout_seconds", "charts/iteration_seconds", "charts/update_seconds"}
a, b = ([{k: v for k, v in json.loads(l).items() if k not in timing} for l in open(p)] for p in sys.argv[1:])
print(f"[slurm] {len(a)} and {len(b)} metrics rows")
sys.exit(0 if a == b and len(a) > 3 else 1)
PY

"$RLM" sweep --config S.yaml --out D --collect >collect.log 2>&1 &&
  grep -q "4 of 4 runs finished" collect.log && [ "$(wc -l <D/results.csv)" -eq 3 ] &&
  ok "--collect: a table of 2 groups, 4 of 4 runs" || fail "--collect: $(cat collect.log)"

# A packed array (--runs-per-gpu 2, issue 33): 2 tasks of 2 runs, each task one `rlm sweep --only A-B` whose two
# workers train at once on the task's GPU. The node has none, so the tasks are told of one (CUDA_VISIBLE_DEVICES=0,
# passed on by sbatch); the runs train on the CPU.
"$RLM" sweep --config S.yaml --out P --emit slurm packed --runs-per-gpu 2 >emit_packed.log 2>&1 ||
  fail "emit --runs-per-gpu: $(cat emit_packed.log)"
grep -q '^#SBATCH --array=0-1$' packed/slurm_test.sbatch && ok "a packed array has a task per 2 runs" ||
  fail "packed array line: $(grep array packed/slurm_test.sbatch)"
job3=$(CUDA_VISIBLE_DEVICES=0 sbatch --parsable packed/slurm_test.sbatch 2>sbatch.err) ||
  fail "sbatch (packed): $(cat sbatch.err)"
wait_for_array "$job3" 300 || fail "the packed array did not finish within 300 s"
finished=$(ls P/runs/*/done.json 2>/dev/null | wc -l)
[ "$finished" -eq 4 ] && ok "the packed array finished all 4 runs" ||
  fail "$finished of 4 packed runs finished: $(tail -n 3 P/logs/slurm-*.log)"
grep -q "2 to 3 of 4 runs (0 finished before), 2 worker(s), 2 on each of GPU 0" "P/logs/slurm-${job3}_1.log" &&
  ok "packed task 1 trained runs 2 and 3 as two workers" || fail "packed task 1: $(cat "P/logs/slurm-${job3}_1.log")"

[ "$failures" -eq 0 ] && echo "all Slurm checks passed" || echo "$failures Slurm check(s) failed"
[ "$failures" -eq 0 ]
