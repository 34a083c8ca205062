#!/usr/bin/env bash
# The CUDA kernels (src/scan/*.cu) compile wherever nvcc is found, also where the build itself is for the CPU (no GPU
# visible, CMakeLists.txt): configures BUILD_DIR/cuda-check with RLM_CUDA=ON and builds the kernels' library only,
# so that a change which breaks them is caught here and not on a lent GPU machine. Incremental after the first run.
# Exit 77 (skipped) without nvcc, or when the build itself already compiles them.
# Usage: test_cuda_kernels_compile.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
SOURCE="$1"
BUILD="$2"
# The build's own target, not a file: a librlm_scan_cuda.a left from an earlier configuration would hide a CPU build.
if ninja -C "$BUILD" -t query rlm_scan_cuda >/dev/null 2>&1; then
  echo "the build compiles the CUDA kernels itself: skipped"
  exit 77
fi
nvcc=$(command -v nvcc || true)
[ -n "$nvcc" ] || [ ! -x /usr/local/cuda/bin/nvcc ] || nvcc=/usr/local/cuda/bin/nvcc
if [ -z "$nvcc" ]; then
  echo "no nvcc: skipped"
  exit 77
fi
prefix=$(sed -n 's/^CMAKE_PREFIX_PATH:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
check="$BUILD/cuda-check"
if [ ! -f "$check/build.ninja" ]; then
  # One architecture is enough to know the kernels compile (they have no per-architecture code); 8.0, the lower of
  # the build's two, has the fewer features. It halves nvcc's device passes.
  cmake -S "$SOURCE" -B "$check" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRLM_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" \
    -DCMAKE_PREFIX_PATH="$prefix" -DTORCH_CUDA_ARCH_LIST=8.0 >"$check.configure.log" 2>&1 ||
    { cat "$check.configure.log"; exit 1; }
fi
ninja -C "$check" -j 1 rlm_scan_cuda
echo "CUDA kernels compile"
