#!/usr/bin/env bash
# build.sh [preset] — configures and builds diffscope with a CMake preset (default: "default", CUDA when nvcc exists).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
jobs=${DIFFSCOPE_JOBS:-$(nproc)}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
