#!/usr/bin/env bash
# Fault injection: kill -9 a training run at random moments (mid-rollout, mid-update, mid-checkpoint write), resume
# it each time, and check that the finished run equals an uninterrupted one bit for bit: every metric of every
# iteration (losses, KL, returns at full precision; timings excluded), the TensorBoard scalars (each step once),
# the greedy evaluation of the final checkpoint, and no temp files left behind.
#
# --sweep: the same for a sweep (2 memory types x 2 seeds, 2 workers): the sweep is interrupted at random moments by
# kill -9 of the sweep alone (its workers must stop through a checkpoint), SIGTERM to its process group (what
# timeout, systemd and Slurm send) or kill -9 of the whole group (a lost machine), then rerun until it finishes; each
# run's metrics must equal those of the same sweep run without interruption.
# --in-process (with --sweep): the interrupted sweeps train their runs as threads of one process (`rlm sweep
# --in-process`), the reference as worker processes: each run must equal the one trained alone in its own process,
# through every stop and resume.
#
# Usage: tests/cli/crash_test.sh [--quick] [--sweep [--in-process]] [--kills N] [--seed S] [--config FILE] RLM_BINARY [key=value ...]
#   (an off-policy --config, algo.type sac/sacd/td3, runs with checkpoint.replay_buffer=true)
#   --quick   a handful of kills on a tiny run (the test suite runs this: cli.crash_resume)
#   --kills   how many kill -9 (default 30; --quick: 4)
#   --seed    seed of the kill schedule (default: random; printed so a failure can be replayed)
# Anyone can run it, e.g.  tests/cli/crash_test.sh --kills 100 build/rlm
set -uo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON="${RLM_PYTHON:-$REPO/.venv/bin/python}"
kills=30
seed=$((RANDOM * 32768 + RANDOM))
config="$REPO/configs/gru_repeat_first.yaml"
quick=0
sweep=0
in_process=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; kills=4; shift ;;
    --sweep) sweep=1; shift ;;
    --in-process) in_process=(--in-process); shift ;;
    --kills) kills="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --config) config="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
    *) break ;;
  esac
done
RLM="${1:?usage: crash_test.sh [--quick] [--kills N] [--seed S] [--config FILE] RLM_BINARY [key=value ...]}"
RLM="$(cd "$(dirname "$RLM")" && pwd)/$(basename "$RLM")"
shift
RANDOM=$seed
work=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"

settings=(experiment.device=cpu experiment.torch_threads=1 env.num_threads=2 logging.console=false
  checkpoint.every=1 checkpoint.keep_last=2)
if grep -Eq '^\s*type:\s*(sac|sacd|td3)\b' "$config"; then
  # An off-policy config: the replay buffer travels in the checkpoints, so a resume is bitwise too.
  settings=(experiment.device=cpu experiment.torch_threads=1 logging.console=false checkpoint.every=1
    checkpoint.keep_last=2 checkpoint.replay_buffer=true)
  if [ "$quick" -eq 1 ]; then
    settings+=(model.memory.hidden_size=16 model.off_policy.actor_layers=[16] model.off_policy.critic_layers=[16]
      algo.off_policy.batch_size=8 algo.off_policy.warmup_episodes=2 algo.off_policy.eval_interval=4
      algo.off_policy.eval_episodes=2)
  fi
elif [ "$quick" -eq 1 ]; then
  settings+=(env.num_envs=4 algo.ppo.steps_per_env=32 algo.ppo.minibatch_size=102 algo.ppo.epochs=2 model.ppo.feature_size=16
    model.ppo.preprocessor_size=16 model.ppo.head_sizes=[16] model.memory.hidden_size=16 algo.total_steps=2400)
else
  settings+=(env.num_envs=8 algo.ppo.steps_per_env=64 algo.ppo.minibatch_size=256 algo.ppo.epochs=4 algo.total_steps=20000)
fi
settings+=("$@")

# ---- --sweep ----
if [ "$sweep" -eq 1 ]; then
  {
    echo "name: crash"
    echo "configs: $config"
    echo "overrides:"
    for s in "${settings[@]}"; do echo "  ${s%%=*}: ${s#*=}"; done
    echo "grid:"
    echo "  model.memory.type: [gru, ffm]"
    echo "seeds: 2"
  } >sweep.yaml
  echo "[crash] sweep mode${in_process[*]:+ (${in_process[*]})}: kill schedule seed $seed, $kills interruptions, config $config"
  start=$(date +%s%N)
  "$RLM" sweep --config sweep.yaml --jobs 2 --out ref >ref.log 2>&1 || { cat ref.log; echo "[crash] FAIL: reference"; exit 1; }
  ref_ms=$((($(date +%s%N) - start) / 1000000))
  echo "[crash] uninterrupted sweep: ${ref_ms} ms"
  workers_gone() {  # waits until no process trains into crash/ (orphans included); 1 if some outlive 60 s
    for _ in $(seq 1 600); do pgrep -f -- "--out $work/crash" >/dev/null || return 0; sleep 0.1; done
    return 1
  }
  interrupted=0 by_kill=0 by_term=0 by_group_kill=0 attempts=0 rounds=0
  # Rounds as in the train mode: each sweep from scratch, interrupted and rerun until it finishes, then compared;
  # new rounds until the interruptions are spent.
  while [ "$interrupted" -lt "$kills" ] || [ "$rounds" -eq 0 ]; do
    rounds=$((rounds + 1))
    rm -rf "$work/crash" crash.log
    while true; do
      attempts=$((attempts + 1))
      setsid "$RLM" sweep --config sweep.yaml --jobs 2 "${in_process[@]}" --out "$work/crash" >>crash.log 2>&1 &
      leader=$!
      if [ "$interrupted" -lt "$kills" ]; then
        delay_ms=$(((RANDOM * 32768 + RANDOM) % (ref_ms + 1)))
        sleep "$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))"
        if kill -0 "$leader" 2>/dev/null; then
          case $((RANDOM % 3)) in
            0) kill -KILL "$leader"; by_kill=$((by_kill + 1)) ;;
            1) kill -TERM -- "-$leader"; by_term=$((by_term + 1)) ;;
            2) kill -KILL -- "-$leader"; by_group_kill=$((by_group_kill + 1)) ;;
          esac
          interrupted=$((interrupted + 1))
        fi
      fi
      wait "$leader" 2>/dev/null
      status=$?
      workers_gone || { echo "[crash] FAIL: workers still train 60 s after their sweep ended (seed $seed)"; exit 1; }
      if [ "$status" -eq 0 ]; then break; fi
      if grep -q "FAILED" crash.log; then
        grep FAILED crash.log | tail -3
        echo "[crash] FAIL: a run was reported FAILED (seed $seed)"
        exit 1
      fi
      if [ "$attempts" -gt $((kills * 4 + 20)) ]; then echo "[crash] FAIL: no progress (seed $seed)"; exit 1; fi
    done
    "$PYTHON" - ref crash <<'PY' || exit 1
import json, pathlib, sys
timing = {"charts/steps_per_second", "charts/rollout_seconds", "charts/iteration_seconds", "charts/update_seconds"}
def rows(path):
    return [{k: v for k, v in json.loads(line).items() if k not in timing} for line in open(path)]
ref, crash = (pathlib.Path(d) / "runs" for d in sys.argv[1:])
runs = sorted(p.name for p in ref.iterdir())
for name in runs:
    a, b = rows(ref / name / "metrics.jsonl"), rows(crash / name / "metrics.jsonl")
    if a != b:
        print(f"[crash] FAIL: {name}: metrics differ from the uninterrupted sweep's")
        sys.exit(1)
print(f"[crash]   {len(runs)} runs: metrics.jsonl bitwise equal to the uninterrupted sweep's (timings excluded)")
PY
    echo "[crash] round $rounds done: $interrupted interruptions so far"
  done
  echo "[crash] $interrupted interruptions ($by_kill kill -9 of the sweep, $by_term group SIGTERM," \
    "$by_group_kill kill -9 of the group) in $attempts sweep processes, $rounds sweeps"
  echo "[crash] sweep mode passed (seed $seed)"
  exit 0
fi

echo "[crash] kill schedule seed $seed, $kills kills, config $config"
start=$(date +%s%N)
"$RLM" train --config "$config" "${settings[@]}" experiment.name=reference experiment.runs_dir=ref >ref.log 2>&1 ||
  { cat ref.log; echo "[crash] FAIL: the uninterrupted run failed"; exit 1; }
ref_ms=$((($(date +%s%N) - start) / 1000000))
ref=$(ls -d ref/reference/*)
# The first start-up is slow (cold caches); time a second, warm run, which is what the kills below interrupt.
start=$(date +%s%N)
"$RLM" train --config "$config" "${settings[@]}" experiment.name=warm experiment.runs_dir=warm >/dev/null 2>&1
warm_ms=$((($(date +%s%N) - start) / 1000000))
[ "$warm_ms" -lt "$ref_ms" ] && ref_ms=$warm_ms
rm -rf warm
echo "[crash] uninterrupted run: ${ref_ms} ms (warm)"

# Kill after a uniform random delay within one whole uninterrupted run (start-up included), so kills land in
# start-up, rollouts, updates and checkpoint writes alike; a resume that outlives its delay finishes the run. A
# finished run is compared with the reference, and a new one starts until the kills are spent.
failures=0
killed=0
rounds=0
mid_write=0
while [ "$killed" -lt "$kills" ] || [ "$rounds" -eq 0 ]; do
  rounds=$((rounds + 1))
  rm -rf crash crash.log
  run=""
  attempts=0
  round_kills=0
  while true; do
    attempts=$((attempts + 1))
    if [ -z "$run" ]; then
      "$RLM" train --config "$config" "${settings[@]}" experiment.name=crash experiment.runs_dir=crash >>crash.log 2>&1 &
    else
      "$RLM" train --resume "$run" >>crash.log 2>&1 &
    fi
    pid=$!
    if [ "$killed" -lt "$kills" ]; then
      delay_ms=$(((RANDOM * 32768 + RANDOM) % (ref_ms + 1)))
      sleep "$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))"
      if kill -9 "$pid" 2>/dev/null; then
        wait "$pid" 2>/dev/null
        killed=$((killed + 1))
        round_kills=$((round_kills + 1))
      fi
    fi
    wait "$pid" 2>/dev/null
    status=$?
    [ -z "$run" ] && run=$(ls -d crash/crash/* 2>/dev/null | head -n 1)
    if [ -n "$run" ] && ! ls "$run"/checkpoints/ckpt_*.rlmckpt >/dev/null 2>&1; then
      rm -rf crash  # killed before its first checkpoint: nothing to resume, start again as a user would
      run=""
      continue
    fi
    if [ "$status" -eq 0 ] && [ -n "$run" ] && grep -q '\[train\] done' crash.log; then break; fi
    if [ "$status" -ne 137 ] && [ "$status" -ne 0 ]; then
      tail -5 crash.log
      echo "[crash] FAIL: a resume exited with status $status (seed $seed)"
      exit 1
    fi
    sed -i 's/\[train\] done/[train] finished early/' crash.log  # only the last process's "done" counts
    if [ "$attempts" -gt $((kills * 4 + 20)) ]; then echo "[crash] FAIL: no progress (seed $seed)"; exit 1; fi
  done
  # A resume that found temp files of an atomic write: that kill landed mid-write (a checkpoint, config or metrics).
  mid_write=$((mid_write + $(grep -c "removed .* temp file" crash.log)))
  echo "[crash] round $rounds: $round_kills kill -9 in $attempts processes"

  "$PYTHON" - "$ref" "$run" <<'PY' || failures=$((failures + 1))
import json, sys
timing = {"charts/steps_per_second", "charts/rollout_seconds", "charts/iteration_seconds", "charts/update_seconds"}
def rows(run):
    out = []
    for line in open(f"{run}/metrics.jsonl"):
        row = json.loads(line)
        out.append({k: v for k, v in row.items() if k not in timing})
    return out
a, b = rows(sys.argv[1]), rows(sys.argv[2])
if a != b:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            print(f"[crash] FAIL: metrics row {i} differs:\n  {x}\n  {y}")
            break
    else:
        print(f"[crash] FAIL: {len(a)} metric rows uninterrupted, {len(b)} after the crashes")
    sys.exit(1)
print(f"[crash]   metrics.jsonl: {len(a)} rows, bitwise equal (timings excluded)")
PY
  if [ ! -f ref_tb.json ]; then "$PYTHON" "$REPO/scripts/tb_readback.py" "$ref" >ref_tb.json; fi
  "$PYTHON" "$REPO/scripts/tb_readback.py" "$run" >run_tb.json && "$PYTHON" - <<'PY' || failures=$((failures + 1))
import json
a, b = json.load(open("ref_tb.json")), json.load(open("run_tb.json"))
drop = {"charts/steps_per_second", "charts/rollout_seconds", "charts/iteration_seconds", "charts/update_seconds"}
def steps(scalars):
    return {tag: sorted(p[0] for p in points) for tag, points in scalars.items()}
def values(scalars):
    return {tag: sorted(p for p in points) for tag, points in scalars.items() if tag not in drop}
if steps(a) != steps(b) or values(a) != values(b):
    print("[crash] FAIL: TensorBoard scalars differ (a step logged twice or lost?)")
    raise SystemExit(1)
print(f"[crash]   TensorBoard: {sum(len(v) for v in a.values())} scalars, each step once, equal values")
PY
  for r in "$ref" "$run"; do
    [ "$r" = "$ref" ] && [ -f "$ref/eval.json" ] && continue
    "$RLM" eval --run "$r" --episodes 8 --deterministic >eval.log 2>&1 || { cat eval.log; failures=$((failures + 1)); }
  done
  if cmp -s <(grep -v '"checkpoint"' "$ref/eval.json") <(grep -v '"checkpoint"' "$run/eval.json"); then
    echo "[crash]   greedy evaluation of the final checkpoints: equal"
  else
    echo "[crash] FAIL: the final checkpoints evaluate differently"
    failures=$((failures + 1))
  fi
  leftovers=$(find "$run" -name '.*.tmp.*' | wc -l)
  [ "$leftovers" -eq 0 ] || { echo "[crash] FAIL: $leftovers temp files left"; failures=$((failures + 1)); }
  [ "$failures" -eq 0 ] || break
done

if [ "$failures" -ne 0 ]; then
  echo "[crash] $failures check(s) failed (seed $seed)"
  exit 1
fi
echo "[crash] ok: $killed kill -9 over $rounds runs ($mid_write of them mid-write, temp files cleaned up on resume);"
echo "[crash] every resumed run equals the uninterrupted one"
