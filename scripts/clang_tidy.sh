#!/usr/bin/env bash
# clang-tidy with .clang-tidy's checks over the sources whose path matches REGEX (default: every layer), compiled as
# BUILD_DIR builds them (default build/, so build once first). GCC builds the torch layers with a precompiled header,
# which clang cannot read ("not a valid precompiled PCH file"), so this runs on a copy of the compile database without
# it, in BUILD_DIR/clang_tidy/. On 2 cores (Zen 3 VM): about 6 min for 'src/(core|envs|sweep)/', 13 to 28 min for the
# torch layers 'src/(agents|memory|scan|nn|app)/' (about 30 s per torch file, more when the VM is busy).
# Usage: scripts/clang_tidy.sh [REGEX] [BUILD_DIR]
set -euo pipefail
regex=${1:-src/}
build=${2:-build}
mkdir -p "$build/clang_tidy"
python3 - "$build/compile_commands.json" "$build/clang_tidy/compile_commands.json" <<'PY'
import json
import re
import sys

with open(sys.argv[1]) as f:
    entries = json.load(f)
for entry in entries:
    entry["command"] = re.sub(r" -include \S+cmake_pch\.hxx| -Winvalid-pch", "", entry["command"])
with open(sys.argv[2], "w") as f:
    json.dump(entries, f)
PY
run-clang-tidy -p "$build/clang_tidy" -j "$(nproc)" -quiet "$regex"
