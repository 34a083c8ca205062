#!/usr/bin/env bash
# Every citation in the repository can be followed from a clone: nothing cites the implementation specs or papers
# that the first sessions worked from outside the repository (envs.md, models_algos.md, shm.md, ... in a research/
# folder; papers/000...), nor an absolute path of one machine. Cite the paper's section or equation, or the authors'
# code as repo@commit:path (docs/REFERENCES.md); in-repository pages are cited with their path (docs/models/shm.md).
# Usage: check_citations.sh REPO_ROOT
set -euo pipefail
cd "$1"
# A spec file's name not preceded by a path (docs/models/shm.md is ours), the folders, or one machine's paths.
pattern='(^|[^/A-Za-z0-9_.-])(envs|models_algos|shm|ffm|kf|stm|spiking|box2d|DESIGN|STYLE)\.md|research/(envs|models_algos|shm|ffm|kf|stm|spiking|box2d)|shared/(research|papers)|/work/|papers/00[0-9]|spec digest'
found=$(grep -rnIE "$pattern" src tests python configs sweeps docs scripts README.md CMakeLists.txt rlm \
  --exclude-dir=__pycache__ --exclude=check_citations.sh || true)
if [ -n "$found" ]; then
  echo "$found" | head -50
  echo "$(echo "$found" | wc -l) lines cite files outside the repository (see docs/REFERENCES.md for what to cite)"
  exit 1
fi
echo "no citation of a file outside the repository"
