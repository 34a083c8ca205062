#!/usr/bin/env bash
# The off-policy trainers through the command line: a tiny SAC-D run writes its run folder, eval loads its actor,
# --resume continues it (the replay buffer travels in the checkpoint), SIGINT stops it with a checkpoint, and a
# PPO option in an SAC-D config is refused. Usage: test_cli_off_policy.sh PATH_TO_RLM_BINARY
set -euo pipefail
RLM="$1"
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

tiny=(experiment.name=tiny experiment.device=cpu model.memory.hidden_size=16 model.off_policy.actor_layers=[16]
  model.off_policy.critic_layers=[16] algo.off_policy.batch_size=4 algo.off_policy.warmup_episodes=2
  algo.off_policy.eval_interval=2 algo.off_policy.eval_episodes=2 checkpoint.every=1 checkpoint.replay_buffer=true
  logging.tensorboard=false)
config="$REPO/configs/offpolicy/sacd_gru_repeat_first.yaml"
"$RLM" train --config "$config" "${tiny[@]}" algo.total_steps=204 >train.log
cat train.log
run=$(ls -d runs/tiny/*)
[ "$(wc -l <"$run/metrics.jsonl")" -eq 4 ] || { echo "FAIL: expected 4 metric rows (one per episode)"; exit 1; }
grep -q '"eval/episode_return_mean":-\?[0-9]' "$run/metrics.jsonl" || { echo "FAIL: no evaluation logged"; exit 1; }
grep -q 'type: sacd' "$run/config.yaml" || { echo "FAIL: resolved config lacks algo.type"; exit 1; }

"$RLM" eval --run "$run" --episodes 3 --deterministic | tee eval.log
grep -q 'over 3 episodes (greedy)' eval.log || { echo "FAIL: eval line"; exit 1; }

"$RLM" train --resume "$run" algo.total_steps=306 >resume.log
cat resume.log
[ "$(wc -l <"$run/metrics.jsonl")" -eq 6 ] || { echo "FAIL: resumed run should have 6 metric rows"; exit 1; }
if grep -q 'refilled' resume.log; then echo "FAIL: the replay buffer should come from the checkpoint"; exit 1; fi

# Resuming without a stored buffer refills it and says the run is not bitwise the uninterrupted one.
"$RLM" train --config "$config" "${tiny[@]}" experiment.name=nobuffer checkpoint.replay_buffer=false \
  algo.total_steps=102 >/dev/null
"$RLM" train --resume "$(ls -d runs/nobuffer/*)" algo.total_steps=153 >nobuffer.log
grep -q 'refilled it with' nobuffer.log || { echo "FAIL: no refill notice"; cat nobuffer.log; exit 1; }

# SIGINT stops with a checkpoint (exit 130) and --resume finishes the run.
"$RLM" train --config "$config" "${tiny[@]}" experiment.name=interrupt algo.total_steps=100000000 \
  >interrupt.log 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  grep -q 'run folder' interrupt.log 2>/dev/null && [ -n "$(ls runs/interrupt/*/checkpoints 2>/dev/null)" ] && break
  sleep 0.2
done
kill -INT "$pid"
status=0
wait "$pid" || status=$?
[ "$status" -eq 130 ] || { echo "FAIL: SIGINT exit status $status, expected 130"; cat interrupt.log; exit 1; }
grep -q 'train --resume' interrupt.log || { echo "FAIL: no resume hint"; exit 1; }
"$RLM" train --resume "$(ls -d runs/interrupt/*)" algo.total_steps=510 >/dev/null

# SIGTERM during an evaluation stops within seconds (issue 30, item 4): a run whose evaluation would take hours
# (10^6 episodes) stops, and resumed with 20 evaluation episodes it plays the interrupted evaluation again and ends
# bitwise equal (timings aside) to a run that had 20 from the start.
"$RLM" train --config "$config" "${tiny[@]}" experiment.name=twin algo.total_steps=204 \
  algo.off_policy.eval_episodes=20 >/dev/null
"$RLM" train --config "$config" "${tiny[@]}" experiment.name=longeval algo.total_steps=204 \
  algo.off_policy.eval_episodes=1000000 logging.progress_seconds=0 >longeval.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do grep -q 'evaluating' longeval.log 2>/dev/null && break; sleep 0.1; done
grep -q 'evaluating' longeval.log || { echo "FAIL: the run never reached its evaluation"; cat longeval.log; exit 1; }
kill -TERM "$pid"
timeout 60 tail --pid="$pid" -f /dev/null || { kill -KILL "$pid"; echo "FAIL: still evaluating 60 s after SIGTERM"; exit 1; }
status=0
wait "$pid" || status=$?
[ "$status" -eq 143 ] || { echo "FAIL: SIGTERM during evaluation: exit $status"; cat longeval.log; exit 1; }
"$RLM" train --resume "$(ls -d runs/longeval/*)" algo.off_policy.eval_episodes=20 >/dev/null
python3 - "$(ls -d runs/twin/*)/metrics.jsonl" "$(ls -d runs/longeval/*)/metrics.jsonl" <<'PY'
import json, sys
timing = {"charts/steps_per_second", "charts/iteration_seconds", "charts/update_seconds"}
rows = [[{k: v for k, v in json.loads(line).items() if k not in timing and k != "time"} for line in open(f)]
        for f in sys.argv[1:]]
assert rows[0] == rows[1], f"metrics differ:\n{rows[0]}\n{rows[1]}"
assert any(r.get("eval/episodes") == 20 for r in rows[1]), rows[1]
print(f"stopped during an evaluation and resumed: {len(rows[1])} metric rows equal to the uninterrupted run's")
PY

# A PPO option in an off-policy config is refused before anything is written.
status=0
"$RLM" train --config "$config" algo.ppo.lr=0.01 experiment.name=refused 2>err.log || status=$?
[ "$status" -eq 2 ] || { echo "FAIL: exit $status for a PPO option under sacd"; exit 1; }
grep -q 'algo.ppo.lr is read by algo.type ppo; algo.type = sacd reads' err.log || { cat err.log; exit 1; }
[ ! -e runs/refused ] || { echo "FAIL: a refused config created a run folder"; exit 1; }
# An env with a goal logs success rates; eval on other tasks (Best-Arm out of distribution) writes its own file, and
# an override of anything but env.options is refused (the model must match the checkpoint).
"$RLM" train --config "$REPO/configs/offpolicy/sacd_kf_best_arm.yaml" "${tiny[@]}" experiment.name=bestarm \
  model.memory.hidden_size=16 algo.off_policy.sampled_seq_len=8 algo.total_steps=60 >/dev/null
run=$(ls -d runs/bestarm/*)
grep -q '"charts/success_rate":[0-9]' "$run/metrics.jsonl" || { echo "FAIL: no success rate logged"; exit 1; }
"$RLM" eval --run "$run" --episodes 20 env.options.sigma_low=2 env.options.sigma_high=3 | tee ood.log
grep -q 'success rate' ood.log || { echo "FAIL: eval printed no success rate"; exit 1; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['episodes'] == 20 and 0 <= d['success_rate'] <= 1 \
  and d['env_options']['env.options.sigma_low'] == '2', d" "$run/eval_sigma_low=2_sigma_high=3.json"
[ ! -e "$run/eval.json" ] || { echo "FAIL: an out-of-distribution eval overwrote eval.json"; exit 1; }
status=0
"$RLM" eval --run "$run" model.memory.hidden_size=8 2>err.log || status=$?
[ "$status" -eq 2 ] || { echo "FAIL: exit $status for a model override in eval"; exit 1; }
grep -q 'eval takes only env.options' err.log || { cat err.log; exit 1; }
echo "cli off-policy train/eval/resume ok"
