#!/usr/bin/env bash
# The SIMD-cloned kernels (src/scan/simd_clones.hpp) in their AVX2 version. A native run on an AVX-512 machine (the
# dev VM) only ever calls the x86-64-v4 clones; valgrind's virtual CPU has AVX2 but no AVX-512, so under it the
# loader binds the x86-64-v3 ones. This runs the tests of those kernels there: the GRU step loop's gates against
# torch's GRU and STM's fused item and relational writes and nn::tanh against torch's ops (under callgrind, whose
# profile shows which clone ran), and the SHM scan against its loop.
# Exit 77 (skipped) without valgrind, off x86-64, or when valgrind's CPU does not pick the AVX2 clone.
# Usage: test_simd_clones_avx2.sh BUILD_DIR
set -euo pipefail
BUILD="$1"
if ! command -v valgrind >/dev/null 2>&1 || [ "$(uname -m)" != x86_64 ]; then
  echo "valgrind on x86-64 needed: skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_NUM_THREADS=1

valgrind --tool=callgrind --callgrind-out-file="$work/gru.callgrind" "$BUILD/test_memory" \
  "oneDNN linear: the GRU step loop equals torch*" >"$work/gru.log" 2>&1 || { cat "$work/gru.log"; exit 1; }
grep -q "All tests passed" "$work/gru.log" || { cat "$work/gru.log"; exit 1; }
if ! grep -aq "gru_gates_forward.*arch_x86_64_v3" "$work/gru.callgrind"; then
  echo "the GRU gates' AVX2 clone did not run under valgrind (its CPU picked another): skipped"
  exit 77
fi
grep -aq "gru_gates_backward.*arch_x86_64_v3" "$work/gru.callgrind" || { echo "FAIL: backward's AVX2 clone did not run"; exit 1; }

valgrind --tool=callgrind --callgrind-out-file="$work/stm.callgrind" "$BUILD/test_memory" \
  "stm: the CPU's fused relational write*,nn::tanh*" >"$work/stm.log" 2>&1 || { cat "$work/stm.log"; exit 1; }
grep -q "All tests passed" "$work/stm.log" || { cat "$work/stm.log"; exit 1; }
for kernel in relational_forward relational_backward item_write_forward item_write_backward tanh_floats; do
  grep -aq "$kernel.*arch_x86_64_v3" "$work/stm.callgrind" || { echo "FAIL: $kernel's AVX2 clone did not run"; exit 1; }
done

valgrind --tool=none "$BUILD/test_scan" "shm_scan*" >"$work/shm.log" 2>&1 || { cat "$work/shm.log"; exit 1; }
grep -q "All tests passed" "$work/shm.log" || { cat "$work/shm.log"; exit 1; }
echo "AVX2 clones: the GRU gates, STM's item and relational writes, nn::tanh and the SHM scan pass their tests"
