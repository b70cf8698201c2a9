#!/usr/bin/env bash
# run.sh [diffscope args...] — installs the dependencies, builds the app alone (not the tests: the window comes up
# minutes sooner), and launches it on the bundled default model (moons).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh default diffscope
exec build/bin/diffscope "$@"
