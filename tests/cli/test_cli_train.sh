#!/usr/bin/env bash
# End-to-end through the command line: a tiny train run writes the run folder (resolved config, metrics.jsonl/csv,
# TensorBoard events readable by the real tensorboard package, checkpoints), eval writes eval.json, and
# --resume continues the run. Usage: test_cli_train.sh PATH_TO_RLM_BINARY
set -euo pipefail
RLM="$1"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON="${RLM_PYTHON:-$REPO/.venv/bin/python}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

tiny=(experiment.name=tiny experiment.device=cpu env.num_envs=4 algo.ppo.steps_per_env=32 algo.ppo.minibatch_size=102
  algo.ppo.epochs=1 model.ppo.feature_size=16 model.ppo.preprocessor_size=16 model.ppo.head_sizes=[16] model.memory.hidden_size=16
  checkpoint.every=1)
"$RLM" train --config "$REPO/configs/gru_repeat_first.yaml" "${tiny[@]}" algo.total_steps=400 >train.log
cat train.log
run=$(ls -d runs/tiny/*)
for f in config.yaml metrics.jsonl metrics.csv; do
  [ -s "$run/$f" ] || { echo "FAIL: $run/$f missing"; exit 1; }
done
ls "$run"/events.out.tfevents.* >/dev/null || { echo "FAIL: no TensorBoard event file"; exit 1; }
[ "$(wc -l <"$run/metrics.jsonl")" -eq 2 ] || { echo "FAIL: expected 2 metric rows"; exit 1; }
grep -q 'num_envs: 4' "$run/config.yaml" || { echo "FAIL: resolved config lacks the override"; exit 1; }
"$PYTHON" "$REPO/scripts/tb_readback.py" "$run" >tb.json
grep -q 'charts/episode_return_mean' tb.json || { echo "FAIL: TensorBoard read-back lacks the return"; exit 1; }

"$RLM" eval --run "$run" --episodes 6 | tee eval.log
grep -q 'mean episode return .* ± .* over 6 episodes' eval.log || { echo "FAIL: eval line"; exit 1; }
grep -q '"episodes": 6' "$run/eval.json" || { echo "FAIL: eval.json"; exit 1; }

"$RLM" train --resume "$run" algo.total_steps=800 >resume.log
cat resume.log
[ "$(wc -l <"$run/metrics.jsonl")" -eq 4 ] || { echo "FAIL: resumed run should have 4 metric rows"; exit 1; }
grep -q 'total_steps: 800' "$run/config.yaml" || { echo "FAIL: resumed config not saved"; exit 1; }
# A run folder from before PPO's options moved into algo.ppo (its config.yaml holds algo.lr) is refused on resume and
# eval with the key's new place, and nothing in it changes (but the lock, taken before the config is read).
old=$(mktemp -d "$PWD/old_run.XXXX")
cp -r "$run"/. "$old"
sed -i 's/^algo:$/algo:\n  lr: 0.0003/' "$old/config.yaml"
before=$(find "$old" -type f ! -name .lock -exec md5sum {} + | sort)  # .lock: the pid of whoever holds the folder
for command in "train --resume $old" "eval --run $old --episodes 2"; do
  status=0
  "$RLM" $command >old.log 2>&1 || status=$?
  [ "$status" -eq 2 ] && grep -q "config.yaml:[0-9]*: algo.lr is now algo.ppo.lr" old.log ||
    { cat old.log; echo "FAIL: '$command' of an old run folder: exit $status"; exit 1; }
done
[ "$(find "$old" -type f ! -name .lock -exec md5sum {} + | sort)" = "$before" ] || { echo "FAIL: a refused run folder changed"; exit 1; }
rm -r "$old"
# An evaluation on other tasks names its file after the env.options it sets; a value too long for a file name still
# gets its result written (the name shortened with a hash; the file lists the options), not lost after the episodes.
"$RLM" train --config "$REPO/configs/gru_repeat_first.yaml" "${tiny[@]}" experiment.name=arm env.id=kf/BestArm \
  algo.ppo.max_seq_len=2000 algo.total_steps=100 >arm.log
arm=$(ls -d runs/arm/*)
long="0.$(printf '1%.0s' $(seq 1 280))"
"$RLM" eval --run "$arm" --episodes 2 "env.options.sigma_low=$long" >eval_long.log ||
  { cat eval_long.log; echo "FAIL: eval with a 282-character env.options value"; exit 1; }
file=$(ls "$arm"/eval_sigma_low=*.json)
name=$(basename "$file")
[ "${#name}" -le 255 ] && grep -q "\"env.options.sigma_low\": \"$long\"" "$file" ||
  { echo "FAIL: long eval file name: $name"; exit 1; }
echo "cli train/eval/resume ok"

# SIGINT stops after the current iteration with a checkpoint (exit 130), and --resume finishes the run.
"$RLM" train --config "$REPO/configs/gru_repeat_first.yaml" "${tiny[@]}" experiment.name=interrupt \
  checkpoint.every=1000 algo.total_steps=100000000 >interrupt.log 2>&1 &
pid=$!
run2=""
for _ in $(seq 1 200); do  # wait until the first iteration has been logged
  run2=$(ls -d runs/interrupt/* 2>/dev/null || true)
  [ -n "$run2" ] && [ -s "$run2/metrics.jsonl" ] && break
  sleep 0.1
done
kill -INT "$pid"
status=0
wait "$pid" || status=$?
cat interrupt.log
[ "$status" -eq 130 ] || { echo "FAIL: interrupted train should exit 130, got $status"; exit 1; }
ls "$run2"/checkpoints/ckpt_*.rlmckpt >/dev/null || { echo "FAIL: no checkpoint after SIGINT"; exit 1; }
grep -q 'train --resume' interrupt.log || { echo "FAIL: no resume hint"; exit 1; }
"$RLM" train --resume "$run2" algo.total_steps=1000 >resume2.log
grep -q '\[train\] done' resume2.log || { echo "FAIL: resume after SIGINT did not finish"; exit 1; }
echo "cli interrupt/resume ok"
