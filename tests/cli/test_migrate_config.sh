#!/usr/bin/env bash
# scripts/migrate_config.py: an old-layout config (PPO's options flat in algo and model, per-network memories in
# model) comes out in the new layout with its comments, exactly as written below; a second run changes nothing; a
# sweep's dotted keys are renamed; a flow-style section is refused with one line and exit 2; and every shipped
# config, sweep and test config is already in the new layout. Usage: test_migrate_config.sh [PYTHON] (default:
# $RLM_PYTHON, else the repository's .venv/bin/python)
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHON="${1:-${RLM_PYTHON:-$REPO/.venv/bin/python}}"
migrate() { (cd "$REPO" && "$PYTHON" -m scripts.migrate_config "$@"); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$work/old.yaml" <<'EOF'
# A PPO run (algo.lr=3e-4 in the paper).
model:
  feature_size: 64       # paper: 128
  memory:
    type: gru
  head_sizes:
    - 64
    - 64
algo:
  total_steps: 1000
  # the learning rate
  lr: 0.0003
  epochs: 8
EOF
cat >"$work/want.yaml" <<'EOF'
# A PPO run (algo.ppo.lr=3e-4 in the paper).
model:
  ppo:
    feature_size: 64       # paper: 128
    head_sizes:
      - 64
      - 64
  memory:
    type: gru
algo:
  total_steps: 1000
  ppo:
    # the learning rate
    lr: 0.0003
    epochs: 8
EOF
cat >"$work/offpolicy.yaml" <<'EOF'
model:
  actor_memory:
    type: gru
  off_policy:
    actor_layers: [64]
algo:
  type: sac
EOF
cat >"$work/offpolicy_want.yaml" <<'EOF'
model:
  off_policy:
    actor_layers: [64]
    actor_memory:
      type: gru
algo:
  type: sac
EOF
cat >"$work/sweep.yaml" <<'EOF'
configs: configs/gru_repeat_first.yaml
overrides: {model.critic_memory.type: gru}
grid:
  algo.lr: [0.001, 0.002]
  model.memory.type: [gru, ffm]
EOF
migrate --check "$work/old.yaml" >/dev/null && fail "--check should exit 1 for an old config"
migrate "$work/old.yaml" "$work/offpolicy.yaml" "$work/sweep.yaml" >/dev/null
diff -u "$work/want.yaml" "$work/old.yaml" || fail "migrated PPO config differs"
diff -u "$work/offpolicy_want.yaml" "$work/offpolicy.yaml" || fail "migrated off-policy config differs"
grep -q '^  algo.ppo.lr: \[0.001, 0.002\]$' "$work/sweep.yaml" || fail "sweep grid key not renamed: $(cat "$work/sweep.yaml")"
grep -q '^overrides: {model.off_policy.critic_memory.type: gru}$' "$work/sweep.yaml" || fail "sweep override not renamed"
migrate --check "$work/old.yaml" "$work/offpolicy.yaml" "$work/sweep.yaml" || fail "a second run would change a file"

printf 'algo: {lr: 1}\n' >"$work/flow.yaml"
status=0
migrate "$work/flow.yaml" 2>"$work/err" || status=$?
[ "$status" -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "flow.yaml: line 1: 'algo:' holds a flow-style" "$work/err" ||
  fail "flow style: status $status, $(cat "$work/err")"

cd "$REPO"
mapfile -t shipped < <(find configs sweeps tests/data -name '*.yaml' | sort)
migrate --check "${shipped[@]}" || fail "shipped configs are not in the new layout"
echo "test_migrate_config: ok (${#shipped[@]} shipped YAML files in the new layout)"
