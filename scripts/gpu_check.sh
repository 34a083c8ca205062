#!/usr/bin/env bash
# Runs on a GPU machine: builds with CUDA, runs the CUDA tests, the GPU benchmarks, the whole test suite and the
# env thread-scaling benchmark, and writes every log and result into RESULTS_DIR.
#   Usage: scripts/gpu_check.sh RESULTS_DIR [STAGE ...]
#   STAGE: build, cuda (the [cuda] tests), bench (memory layer and PPO on the GPU), test (ctest), envs (env
#   throughput and 2- and 8-thread scaling), learn (learning curves at full scale), backends (each backend's PPO
#   paper config, alone and RLM_BACKENDS_CONCURRENT at once: `rlm bench --backends --paper --concurrent N`),
#   concurrent (aggregate env steps/s of N runs sharing the GPU through `rlm sweep --runs-per-gpu N`: as processes,
#   as threads of one process, and as processes under MPS), profile (each backend's forward+backward at the PPO
#   paper configs' minibatch shape, 160 sequences x 51 steps, by kernel: `rlm bench-memory --profile`). Default: the
#   first five, in that order, most important first; learn, backends, concurrent and profile only when named.
#   RLM_CONCURRENT_N, RLM_CONCURRENT_SECONDS, RLM_CONCURRENT_CONFIG: the concurrent stage's run counts (default
#   "1 4 8"), how long each sweep trains (default 40 s; 7 sweeps) and the config (default SHM Table 1's GRU
#   RepeatPreviousEasy).
#   RLM_BUILD_TARGETS: what the build stage builds (default: everything; `rlm` is enough for learn).
#   RLM_LEARN_RUNS, RLM_LEARN_SECONDS: the learn stage's run list (default scripts/learn_runs/
#   repeat_previous_easy.txt) and how long its runs train (default 420 s).
# Seen on an H100 machine: build 1 min 40 s – 2 min 30 s, cuda 17–26 s, bench 10–35 s, test 4 min 20 s (2026-11-24,
# 391 tests) and over 7 min 40 s (2026-11-26, 510 tests, -j 16: the learning tests take 2–4 min there), envs 5 min
# 10 s. The run tool allows 10 minutes per command and brings back at most 8 files from $OUT (these stages write 7
# without envs, so don't tee more into it), so a session runs `build cuda bench` in one command and `test` or `envs`
# in the next, on the still-warm machine (build-gpu stays only while the machine is warm, 30 s after a call: a
# later command on a fresh machine rebuilds everything). The run tool copies the working tree as it is: while
# others edit it, build a clean export instead (git archive HEAD into the ignored .deps/src, carry .deps, and run
# .deps/src/scripts/gpu_check.sh with a link .deps/src/.deps/debs -> .deps/debs).
# On the lent GPU machines (no network) torch is already installed system-wide; the Debian -dev packages must be
# carried in .deps/debs (scripts/fetch_gpu_debs.sh downloads them; pass carry=[".deps"] to the run tool) and are
# unpacked into .deps/root.
set -uo pipefail
RESULTS="${1:?usage: scripts/gpu_check.sh RESULTS_DIR [build|cuda|bench|test|envs|learn|backends|concurrent|profile ...]}"
shift
STAGES=("$@")
[ ${#STAGES[@]} -eq 0 ] && STAGES=(build cuda bench test envs)
for stage in "${STAGES[@]}"; do
  case "$stage" in
    build | cuda | bench | test | envs | learn | backends | concurrent | profile) ;;
    *)
      echo "gpu_check.sh: unknown stage '$stage' (build, cuda, bench, test, envs, learn, backends, concurrent, profile)" >&2
      exit 2
      ;;
  esac
done
mkdir -p "$RESULTS"
cd "$(dirname "$0")/.."
ROOT=$PWD

if [ -d .deps/debs ]; then
  mkdir -p .deps/root
  for f in .deps/debs/*.deb; do dpkg -x "$f" .deps/root; done
  export CMAKE_PREFIX_PATH="$ROOT/.deps/root/usr:${CMAKE_PREFIX_PATH:-}"
  export CPATH="$ROOT/.deps/root/usr/include:${CPATH:-}"
  export LIBRARY_PATH="$ROOT/.deps/root/usr/lib/x86_64-linux-gnu:${LIBRARY_PATH:-}"
  export LD_LIBRARY_PATH="$ROOT/.deps/root/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
# An absolute path: the TensorBoard read-back tests look the interpreter up as a file.
PYTHON="$(command -v "${RLM_PYTHON:-python3}")"
export RLM_SOURCE_DIR="$ROOT" RLM_PYTHON="$PYTHON"
status=0

stage_build() {
  local torch_cmake
  torch_cmake=$("$PYTHON" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
  {
    nvidia-smi
    lscpu  # the host CPU: its model and flags go beside every figure in docs/BENCHMARKS.md
    cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DRLM_CUDA=ON \
      -DCMAKE_PREFIX_PATH="$torch_cmake;${CMAKE_PREFIX_PATH:-}" &&
      time ninja -C build-gpu -j "$(nproc)" ${RLM_BUILD_TARGETS:-}
  } > "$RESULTS/build.log" 2>&1 || { echo "build failed, see $RESULTS/build.log"; tail -30 "$RESULTS/build.log"; exit 1; }
  tail -4 "$RESULTS/build.log"
}

# The CUDA tests by name (kernels against the CPU ops, backends CPU vs CUDA), so their result stands on its own.
stage_cuda() {
  { ./build-gpu/test_scan "[cuda]" && ./build-gpu/test_memory "[cuda]" && ./build-gpu/test_agents "[cuda]"; } \
    > "$RESULTS/cuda_tests.txt" 2>&1 || status=1
  grep -E "passed|failed|FAILED" "$RESULTS/cuda_tests.txt"
  # Without a usable device the tests pass by skipping: that is a failure here.
  if grep -q "no CUDA device: skipped" "$RESULTS/cuda_tests.txt"; then
    echo "CUDA tests SKIPPED: torch sees no CUDA device"
    status=1
  fi
}

# Scan bandwidth against the device's copy bandwidth, every memory backend at POPGym sizes, and PPO on the GPU.
stage_bench() {
  ./build-gpu/rlm bench-memory --device cuda --json "$RESULTS/memory_bench.json" > "$RESULTS/memory_bench.txt" 2>&1 ||
    status=1
  cat "$RESULTS/memory_bench.txt"
  ./build-gpu/rlm bench --device cuda --json "$RESULTS/ppo_bench.json" > "$RESULTS/ppo_bench.txt" 2>&1 || status=1
  cat "$RESULTS/ppo_bench.txt"
}

# Tests that need what the lent image lacks are left out, and the script says so: the TensorBoard read-back tests
# when the python has no tensorboard (the H100 image has 2.21.0), and cli.run_safety, whose relative-path case goes
# through ./rlm, whose set-up installs the Debian packages (no network there). Everything else runs.
stage_test() {
  local exclude=()
  if ! "$PYTHON" -c 'import tensorboard' > /dev/null 2>&1; then
    echo "left out: the TensorBoard read-back tests ($PYTHON has no tensorboard)"
    exclude+=("TensorBoard|tensorboard")
  fi
  if ! dpkg-query -W libbox2d-dev > /dev/null 2>&1; then
    echo "left out: cli.run_safety (./rlm's set-up would apt-get the Debian packages)"
    exclude+=("cli.run_safety")
  fi
  local filter=()
  [ ${#exclude[@]} -gt 0 ] && filter=(-E "$(IFS='|'; echo "${exclude[*]}")")
  ctest --test-dir build-gpu --output-on-failure -j "$(nproc)" "${filter[@]}" > "$RESULTS/tests.log" 2>&1 || status=1
  grep -E "tests passed|\*\*\*" "$RESULTS/tests.log" | tail -20
}

# Env throughput, and VecEnv thread scaling on real cores (the 2-vCPU dev VM cannot show it: its own compute
# ceiling is ~1.4-1.9x).
stage_envs() {
  ./build-gpu/rlm_env_bench --json "$RESULTS/env_bench.json" > "$RESULTS/env_bench.txt" 2>&1 || status=1
  for threads in 2 8; do
    ./build-gpu/rlm_env_bench --scaling "$threads" --json "$RESULTS/env_scaling_${threads}t.json" \
      > "$RESULTS/env_scaling_${threads}t.txt" 2>&1 || status=1
    tail -1 "$RESULTS/env_scaling_${threads}t.txt"
  done
}

# Learning curves at full scale (issue 29 §6): every run of the list trains at once on the GPU, each with its full
# budget, for RLM_LEARN_SECONDS, and then gets SIGTERM (it checkpoints and stops). learn_curves.csv has every
# iteration of every run, learn_summary.txt the steps each took to reach returns 0 and 0.9, learn_logs.tar.gz the
# console logs and run folders without checkpoints. Threads: the envs step on one thread per run and torch gets two.
stage_learn() {
  local list="${RLM_LEARN_RUNS:-scripts/learn_runs/repeat_previous_easy.txt}" seconds="${RLM_LEARN_SECONDS:-420}"
  local work=build-gpu/learn pids=() names=() name config overrides i rc
  rm -rf "$work"
  mkdir -p "$work"
  while read -r name config overrides; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    # shellcheck disable=SC2086 # the overrides are separate words
    timeout -s TERM -k 60 "$seconds" ./build-gpu/rlm train --config "$config" experiment.name="$name" \
      experiment.runs_dir="$work/runs" experiment.device=cuda experiment.torch_threads=2 \
      logging.tensorboard=false logging.progress_seconds=60 $overrides > "$work/$name.log" 2>&1 &
    pids+=($!)
    names+=("$name")
  done < "$list"
  echo "${#pids[@]} runs from $list for $seconds s"
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    rc=$?
    # 124: stopped by the timeout, as planned; 0: finished its budget.
    if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
      echo "${names[$i]}: exit $rc"
      tail -3 "$work/${names[$i]}.log"
      status=1
    fi
  done
  "$PYTHON" -m scripts.learn_summary "$work/runs" --csv "$RESULTS/learn_curves.csv" | tee "$RESULTS/learn_summary.txt"
  tar -czf "$RESULTS/learn_logs.tar.gz" --exclude=checkpoints -C "$work" .
}

# Each memory backend's PPO paper config on the GPU, timed over its second iteration, against the GRU's (issue 33,
# goal 2: every one at >= 0.5x), and RLM_BACKENDS_CONCURRENT (default 3) processes of each at once (goal 4). STM and
# the spiking cell take 30-40 s an iteration alone on an H200 (2026-11-28): several minutes in all.
stage_backends() {
  ./build-gpu/rlm bench --device cuda --backends --paper --concurrent "${RLM_BACKENDS_CONCURRENT:-3}" \
    --json "$RESULTS/backends.json" > "$RESULTS/backends.txt" 2>&1 || status=1
  cat "$RESULTS/backends.txt"
}

# Where each backend's PPO update spends its time (issue 33, goal 2): one forward+backward of every backend at the
# shape of a PPO paper config's minibatch on POPGym RepeatPreviousEasy (8,192 steps of 51-step episodes: about 160
# sequences x 51 steps), with its 15 costliest kernels and the device's busy time against the wall time (busy far
# below wall: bound by launches and host syncs).
stage_profile() {
  ./build-gpu/rlm bench-memory --device cuda --sequences 160 --steps 51 --profile 15 \
    --json "$RESULTS/profile.json" > "$RESULTS/profile.txt" 2>&1 || status=1
  cat "$RESULTS/profile.txt"
}

# Aggregate throughput of runs sharing the GPU (issue 33, goal 1: SHM Table 1 in 8 hours needs >= 56k env steps/s
# summed over its runs). For each N of RLM_CONCURRENT_N, N seeds of one config train at once through `rlm sweep
# --runs-per-gpu N` for RLM_CONCURRENT_SECONDS and then get SIGTERM, in three ways: as processes (the GPU time-slices
# between their contexts), as threads of one process (`--in-process`: one context, a CUDA stream per run, so kernels
# of different runs may overlap), and as processes under NVIDIA MPS where nvidia-cuda-mps-control starts. N = 1 runs
# once (as a process). concurrent.txt: each run's median env steps/s over its iterations after the first, and their
# sum per way and N.
stage_concurrent() {
  local config="${RLM_CONCURRENT_CONFIG:-configs/repro/shm_table1/gru/repeat_previous_easy.yaml}"
  local seconds="${RLM_CONCURRENT_SECONDS:-40}" work=build-gpu/concurrent way n name flags
  rm -rf "$work"
  mkdir -p "$work"
  for way in processes threads mps; do
    flags=()
    [ "$way" = threads ] && flags=(--in-process)
    if [ "$way" = mps ]; then
      export CUDA_MPS_PIPE_DIRECTORY="$PWD/$work/mps_pipe" CUDA_MPS_LOG_DIRECTORY="$PWD/$work/mps_log"
      mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
      nvidia-cuda-mps-control -d || { echo "MPS: nvidia-cuda-mps-control does not start; skipped"; break; }
    fi
    for n in ${RLM_CONCURRENT_N:-1 4 8}; do
      [ "$n" -eq 1 ] && [ "$way" != processes ] && continue
      name="${way}_n$n"
      printf 'name: %s\nconfigs: %s\noverrides:\n  experiment.device: cuda\n  logging.tensorboard: false\nseeds: %s\n' \
        "$name" "$PWD/$config" "$n" > "$work/$name.yaml"
      timeout -s TERM -k 60 "$seconds" ./build-gpu/rlm sweep --config "$work/$name.yaml" --out "$work/$name" \
        --runs-per-gpu "$n" "${flags[@]}" > "$work/$name.log" 2>&1
      "$PYTHON" - "$work/$name" "$name" <<'PY' | tee -a "$RESULTS/concurrent.txt"
import json, pathlib, statistics, sys
rates = []
for path in sorted(pathlib.Path(sys.argv[1]).glob("runs/*/metrics.jsonl")):
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    sps = [r["charts/steps_per_second"] for r in rows[1:] if "charts/steps_per_second" in r]
    if sps:
        rates.append(statistics.median(sps))
print(f"{sys.argv[2]}: {len(rates)} runs, env steps/s each {[round(r) for r in rates]}, sum {round(sum(rates))}")
PY
    done
    [ "$way" = mps ] && echo quit | nvidia-cuda-mps-control
  done
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  # Runs on threads of one process must give what they give alone, within float rounding on a GPU (issue 33): the
  # same seeds' first iterations, threads against processes (before any update only acting's kernels differ in
  # nothing but their stream; the first update adds the rest).
  for n in ${RLM_CONCURRENT_N:-1 4 8}; do
    [ -d "$work/threads_n$n" ] && [ -d "$work/processes_n$n" ] || continue
    "$PYTHON" - "$work/processes_n$n" "$work/threads_n$n" "$n" <<'PY' | tee -a "$RESULTS/concurrent.txt"
import json, pathlib, sys
keys = ["charts/episode_return_mean", "losses/total_loss", "losses/kl", "losses/value_loss"]
def first(run):
    path = run / "metrics.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    return rows[0] if rows else None
worst, compared = 0.0, 0
for run in sorted((pathlib.Path(sys.argv[1]) / "runs").iterdir()):
    a, b = first(run), first(pathlib.Path(sys.argv[2]) / "runs" / run.name)
    if a is None or b is None:
        continue
    for k in keys:
        if k in a and k in b:
            worst = max(worst, abs(a[k] - b[k]) / max(1e-6, abs(a[k])))
            compared += 1
print(f"threads vs processes, n = {sys.argv[3]}: {compared} first-iteration values compared, "
      f"largest relative difference {worst:.3g}")
PY
  done
}

for stage in "${STAGES[@]}"; do
  echo "== $stage"
  start=$SECONDS
  "stage_$stage"
  echo "== $stage: $((SECONDS - start)) s"
done
exit $status
