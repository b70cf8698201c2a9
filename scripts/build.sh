#!/usr/bin/env bash
# build.sh [preset [target...]] — configures and builds diffscope with a CMake preset (default: "default", CUDA
# when nvcc exists); with targets, only those (e.g. `scripts/build.sh default diffscope`: the app alone).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
shift || true
jobs=${DIFFSCOPE_JOBS:-$(nproc)}
cmake --preset "$preset" >/dev/null
if [ $# -gt 0 ]; then
  cmake --build --preset "$preset" -j "$jobs" --target "$@"
else
  cmake --build --preset "$preset" -j "$jobs"
fi
