#!/usr/bin/env bash
# Downloads (does not install) the Debian packages the build needs into .deps/debs, for the GPU machines, which have
# no network and no package manager: the `run` tool carries .deps/debs there and scripts/gpu_check.sh unpacks it.
# The shared libraries come from Debian 12 (glibc 2.36); if the GPU image's glibc is older, build yaml-cpp and fmt
# from these packages' headers only or use header-only fmt (FMT_HEADER_ONLY) instead.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/debs
cd .deps/debs
apt-get download libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libfmt-dev libfmt9 catch2 libbox2d-dev libbox2d2 \
  zlib1g-dev
ls -1
