#!/usr/bin/env bash
# run.sh [diffscope args...] — installs the dependencies, builds, and launches the app on the bundled default model (moons).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh default
exec build/bin/diffscope "$@"
