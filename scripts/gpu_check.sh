#!/usr/bin/env bash
# Runs on a GPU machine: builds with CUDA, runs the test suite (GPU tests included) and the benchmarks, and writes
# every log and result into RESULTS_DIR. Usage: scripts/gpu_check.sh RESULTS_DIR
# On the lent GPU machines (no network) torch is already installed system-wide; the Debian -dev packages must be
# carried in .deps/debs (scripts/fetch_gpu_debs.sh downloads them; pass carry=[".deps"] to the run tool) and are
# unpacked into .deps/root.
set -uo pipefail
RESULTS="${1:?usage: scripts/gpu_check.sh RESULTS_DIR}"
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
PYTHON="${RLM_PYTHON:-python3}"
TORCH_CMAKE=$("$PYTHON" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')
nvidia-smi > "$RESULTS/nvidia-smi.txt" 2>&1

{
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DRLM_CUDA=ON \
    -DCMAKE_PREFIX_PATH="$TORCH_CMAKE;${CMAKE_PREFIX_PATH:-}" &&
    time ninja -C build-gpu -j "$(nproc)"
} > "$RESULTS/build.log" 2>&1 || { echo "build failed, see $RESULTS/build.log"; tail -30 "$RESULTS/build.log"; exit 1; }

export RLM_SOURCE_DIR="$ROOT" RLM_PYTHON="$PYTHON"
ctest --test-dir build-gpu --output-on-failure -j 4 > "$RESULTS/tests.log" 2>&1
tests_status=$?
tail -5 "$RESULTS/tests.log"

./build-gpu/rlm_env_bench --json "$RESULTS/env_bench.json" > "$RESULTS/env_bench.txt" 2>&1
# VecEnv thread scaling on real cores (the 2-vCPU dev VM cannot show it: its own compute ceiling is ~1.4-1.9x).
for threads in 2 8; do
  ./build-gpu/rlm_env_bench --scaling "$threads" --json "$RESULTS/env_scaling_${threads}t.json" \
    > "$RESULTS/env_scaling_${threads}t.txt" 2>&1
  tail -1 "$RESULTS/env_scaling_${threads}t.txt"
done
./build-gpu/rlm bench --device cuda --json "$RESULTS/ppo_bench.json" > "$RESULTS/ppo_bench.txt" 2>&1
cat "$RESULTS/ppo_bench.txt"
# Scan bandwidth against the device's copy bandwidth, and every memory backend at POPGym sizes on the GPU.
./build-gpu/rlm bench-memory --device cuda --json "$RESULTS/memory_bench.json" > "$RESULTS/memory_bench.txt" 2>&1
cat "$RESULTS/memory_bench.txt"
# The CUDA tests by name, so their result is visible even when another test fails.
{ ./build-gpu/test_scan "[cuda]" && ./build-gpu/test_memory "[cuda]"; } > "$RESULTS/cuda_tests.txt" 2>&1
grep -E "passed|failed" "$RESULTS/cuda_tests.txt"
exit $tests_status
