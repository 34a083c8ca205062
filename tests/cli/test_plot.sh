#!/usr/bin/env bash
# scripts/plot_runs.py on synthetic run folders: 3 seeds of a GRU config and 2 of an FFM config (differing only in
# model.memory.type, experiment.seed and experiment.name) with null values in metrics.jsonl. Checks the grouping
# (--dump-groups), the files written (valid PNGs of the requested size, SVGs), the default metric selection, and
# the one-line errors. Usage: test_plot.sh [PYTHON] (default: $RLM_PYTHON, which ./rlm and scripts/gpu_check.sh set,
# else the repository's .venv/bin/python)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON="${1:-${RLM_PYTHON:-$REPO/.venv/bin/python}}"
PLOT="$REPO/scripts/plot_runs.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() { echo "FAIL: $*"; exit 1; }

# make_run DIR MEMORY SEED LAST_STEP: a run folder whose config.yaml is laid out as `rlm train` writes it.
make_run() {
  local dir=$1 memory=$2 seed=$3 last=$4
  mkdir -p "$dir"
  cat >"$dir/config.yaml" <<EOF
experiment:
  name: ${memory}_s${seed}
  seed: $seed
  device: cpu

env:
  id: popgym/RepeatPrevious   # a comment
  num_envs: 4

model:
  memory:
    type: $memory
    hidden_size: 16
  ppo:
    head_sizes: [64, 64]

algo:
  total_steps: 4096
  ppo:
    lr: 0.0003
EOF
  # Returns rise with the step and the seed; eval runs every other row (null otherwise); the timing tag and the
  # never-logged KL must not get a picture by default.
  : >"$dir/metrics.jsonl"
  local step=512 row=0
  while [ "$step" -le "$last" ]; do
    local eval=null
    [ $((row % 2)) -eq 1 ] && eval="$((step / 512)).5"
    printf '{"step": %d, "charts/episode_return_mean": %d.25, "eval/episode_return_mean": %s, ' \
      "$step" $((step / 512 + seed)) "$eval" >>"$dir/metrics.jsonl"
    printf '"losses/value_loss": 0.%d, "losses/kl": null, "charts/steps_per_second": 1000.0}\n' \
      $((9 - row)) >>"$dir/metrics.jsonl"
    step=$((step + 512 + seed * 128))  # seeds log at different steps: the mean needs a common grid
    row=$((row + 1))
  done
}
make_run runs/gru_s0 gru 0 4096
make_run runs/gru_s1 gru 1 4096
make_run runs/gru_s2 gru 2 2048   # a shorter run: interpolated only inside its own range
make_run runs/ffm_s0 ffm 0 4096
make_run runs/ffm_s1 ffm 1 4096
runs=(runs/gru_s0 runs/gru_s1 runs/gru_s2 runs/ffm_s0 runs/ffm_s1)

# Grouping: the 5 runs form 2 groups, labelled by the one key that differs.
"$PYTHON" "$PLOT" "${runs[@]}" --dump-groups >groups.json
"$PYTHON" - groups.json <<'EOF' || fail "groups: $(cat groups.json)"
import json, sys
groups = json.load(open(sys.argv[1]))
assert groups == {"model.memory.type=gru": ["runs/gru_s0", "runs/gru_s1", "runs/gru_s2"],
                  "model.memory.type=ffm": ["runs/ffm_s0", "runs/ffm_s1"]}, groups
EOF
# A hand-edited config that says the same in other spellings (3e-4, a block list, True) stays in its group; one with
# another value of a key does not.
mkdir edits
cp -r runs/gru_s0 runs/gru_s1 edits/ && cp -r runs/gru_s1 edits/gru_edited
sed -i 's/  lr: 0.0003/  lr: 3e-4/; s/  head_sizes: \[64, 64\]/  head_sizes:\n      - 64\n      - 6.4e1/' \
  edits/gru_edited/config.yaml
printf 'log:\n  tensorboard: True\n' >>edits/gru_edited/config.yaml
printf 'log:\n  tensorboard: true\n' | tee -a edits/gru_s0/config.yaml >>edits/gru_s1/config.yaml
groups() { "$PYTHON" "$PLOT" "$@" --dump-groups | "$PYTHON" -c 'import json, sys; print(sorted(json.load(sys.stdin)))'; }
[ "$("$PYTHON" "$PLOT" edits/gru_s0 edits/gru_s1 edits/gru_edited --dump-groups | grep -c '"edits/')" -eq 3 ] &&
  [ "$(groups edits/gru_s0 edits/gru_s1 edits/gru_edited | grep -o "'" | wc -l)" -eq 2 ] ||
  fail "equal values in other spellings should form one group: $(groups edits/gru_s0 edits/gru_s1 edits/gru_edited)"
sed -i 's/  lr: 3e-4/  lr: 3e-3/' edits/gru_edited/config.yaml
[ "$(groups edits/gru_s0 edits/gru_s1 edits/gru_edited)" = "['algo.ppo.lr=0.0003', 'algo.ppo.lr=0.003']" ] ||
  fail "another lr should label its own group: $(groups edits/gru_s0 edits/gru_s1 edits/gru_edited)"
rm -r edits
[ "$("$PYTHON" "$PLOT" "${runs[@]}" --group-by none --dump-groups | grep -c '": \[')" -eq 5 ] ||
  fail "--group-by none should give 5 groups"

# Plots with the default metrics.
"$PYTHON" "$PLOT" "${runs[@]}" --out out --width-px 640 --height-px 480 >plot.log
cat plot.log
expected=(charts__episode_return_mean eval__episode_return_mean losses__value_loss)
[ "$(wc -l <plot.log)" -eq $((2 * ${#expected[@]})) ] || fail "expected one line per file written"
[ "$(find out -mindepth 1 | wc -l)" -eq $((2 * ${#expected[@]})) ] || fail "unexpected files in out/: $(ls -A out)"
for name in "${expected[@]}"; do
  png="out/$name.png" svg="out/$name.svg"
  [ -s "$png" ] || fail "$png missing"
  [ -s "$svg" ] || fail "$svg missing"
  grep -qx "$png" plot.log || fail "$png not printed"
  [ "$(od -An -tx1 -N8 "$png" | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "$png: not a PNG signature"
  [ "$(od -An -c -j12 -N4 "$png" | tr -d ' \n')" = "IHDR" ] || fail "$png: no IHDR chunk first"
  read -r w0 w1 w2 w3 h0 h1 h2 h3 < <(od -An -tu1 -j16 -N8 "$png")
  width=$(((w0 << 24) | (w1 << 16) | (w2 << 8) | w3)) height=$(((h0 << 24) | (h1 << 16) | (h2 << 8) | h3))
  [ "${width}x$height" = 640x480 ] || fail "$png is ${width}x$height, expected 640x480"
  [ "$(head -c 5 "$svg")" = "<?xml" ] || fail "$svg: no XML header"
  head -n 5 "$svg" | grep -q '<svg' || fail "$svg: no <svg> element"
done
# Matplotlib's SVG keeps each text as a comment: the legend names both groups and the band.
grep -q 'model.memory.type=gru: mean of 3 runs, band min-max' out/charts__episode_return_mean.svg ||
  fail "legend lacks the gru group"
grep -q 'model.memory.type=ffm: mean of 2 runs, band min-max' out/charts__episode_return_mean.svg ||
  fail "legend lacks the ffm group"
grep -q 'env steps' out/losses__value_loss.svg || fail "x axis label missing"

# --metrics picks tags, including a timing tag; a run whose last row is cut short (still being written) plots.
cp -r runs/gru_s0 runs/live
printf '{"step": 9999, "charts/episode_ret' >>runs/live/metrics.jsonl
"$PYTHON" "$PLOT" runs/live --out out2 --metrics charts/steps_per_second --formats png >plot2.log 2>plot2.err
[ "$(cat plot2.log)" = "out2/charts__steps_per_second.png" ] || fail "--metrics: $(cat plot2.log)"
grep -q 'metrics.jsonl:9: skipping an incomplete last row' plot2.err || fail "no warning: $(cat plot2.err)"

# Errors: one line "plot: ...", exit status 2, nothing written.
expect_error() {  # expect_error MESSAGE ARGS...
  local message=$1 status=0
  shift
  "$PYTHON" "$PLOT" "$@" --out bad_out >err.log 2>&1 || status=$?
  [ "$status" -eq 2 ] || fail "'$*' exited $status, expected 2: $(cat err.log)"
  [ "$(cat err.log)" = "$message" ] || fail "'$*' printed '$(cat err.log)', expected '$message'"
  [ ! -e bad_out ] || fail "'$*' wrote output"
}
mkdir -p runs/empty
expect_error "plot: runs/empty/metrics.jsonl not found" runs/gru_s0 runs/empty
cp -r runs/gru_s0 runs/broken
sed -i '2s/.*/{"step": 1024, "charts\/episode_return_mean": 1.0,/' runs/broken/metrics.jsonl
expect_error "plot: runs/broken/metrics.jsonl:2: not JSON" runs/gru_s0 runs/broken
expect_error "plot: metric 'charts/nope' has no values in any run" "${runs[@]}" --metrics charts/nope
expect_error "plot: metric 'losses/kl' has no values in any run" "${runs[@]}" --metrics losses/kl
[ -z "$(find out out2 -name '*.tmp')" ] || fail "temporary files left behind"

echo "test_plot: ok"
