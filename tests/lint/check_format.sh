#!/usr/bin/env bash
# Every C++ and CUDA file of the repository is formatted as .clang-format says (clang-format 14, Debian 12's; other
# major versions format some constructs differently, so the check skips with exit 77 rather than judge by them).
# Usage: check_format.sh REPO_ROOT. Fix with: clang-format -i FILE...
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "clang-format is not installed (scripts/setup.sh installs it): skipped"; exit 77; }
major=$(clang-format --version | sed -nE 's/.*version ([0-9]+)\..*/\1/p')
if [ "$major" != 14 ]; then
  echo "clang-format $major is not the project's clang-format 14: skipped"
  exit 77
fi
mapfile -t files < <(find src tests python/csrc -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.h' \) | sort)
[ ${#files[@]} -gt 100 ] || { echo "found only ${#files[@]} C++ files under src/ and tests/"; exit 1; }
if ! report=$(clang-format --dry-run --Werror "${files[@]}" 2>&1); then
  grep -oE '^[^:]+\.(cpp|hpp|cu|h)' <<<"$report" | sort -u | sed 's/^/not formatted: /'
  echo "fix with: clang-format -i FILE..."
  exit 1
fi
echo "${#files[@]} C++ files formatted"
