#!/usr/bin/env bash
# test.sh — installs the dependencies, builds and runs every test: the default build (CPU tests for real; GPU tests skip
# themselves without a CUDA device; GUI tests through Mesa EGL and Xvfb), then the ASan+UBSan build of the CPU tests,
# then a short fuzz run of the file readers when clang's libFuzzer is available.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export DIFFSCOPE_ROOT="$PWD"
scripts/build.sh default
# a display for the GLFW smoke test
if [ -z "${DISPLAY:-}" ] && command -v Xvfb >/dev/null 2>&1; then
  Xvfb :93 -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
  export DISPLAY=:93
  sleep 1
fi
ctest --test-dir build --output-on-failure -j 2
echo "== ASan + UBSan build of the CPU tests and of the headless app"
scripts/build.sh asan
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# `sample --png` opens a Mesa EGL context; Mesa's dlclose()d driver leaves 112 bytes whose stack LeakSanitizer can
# no longer name (<unknown module>), so the tests that draw with --png (SamplePng, the family sidecar run, the
# guidance sidecar run) run with ASan/UBSan but without the leak check.
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j 2 -LE 'gpu|gui' -E 'SamplePng|FamilyCli.SidecarWithAFamily|Guidance.SampleMatchesNumpy'
ASAN_OPTIONS=detect_leaks=0 ctest --test-dir build-asan --output-on-failure -LE 'gpu|gui' -R 'SamplePng|FamilyCli.SidecarWithAFamily|Guidance.SampleMatchesNumpy'
rm -rf /tmp/diffscope-sanitize
# The headless app with the leak check. Mesa's EGL driver is dlclose()d at eglTerminate: the memory its globals
# still point to then looks leaked, with a stack LeakSanitizer cannot name. A dlclose() that keeps libraries loaded
# (built here, preloaded after the ASan runtime) keeps those globals visible as roots, so only real leaks remain.
nodlclose="$(mktemp -d)/nodlclose.so"
printf 'int dlclose(void *handle) { (void)handle; return 0; }\n' | cc -shared -fPIC -x c -o "$nodlclose" -
# The script's deliberate unwritable export makes the run exit 2 (a failed export, README "headless"); a
# sanitizer report exits otherwise (ASan / UBSan 1, a leak 23), so the run must exit exactly 2 and print none.
san_log="$(mktemp)"
san_rc=0
LD_PRELOAD="$(cc -print-file-name=libasan.so) $nodlclose" ASAN_OPTIONS=detect_leaks=1 \
  build-asan/bin/diffscope gui --headless --backend cpu --no-persist --size 320x240 \
  --model moons --script tests/ui/scripts/sanitize_short.txt 2>"$san_log" || san_rc=$?
cat "$san_log"
if [ "$san_rc" -ne 2 ] || grep -qE 'Sanitizer|runtime error' "$san_log"; then
  echo "headless sanitizer run: exit $san_rc (expected 2, the script's failed export) or a sanitizer report above"
  exit 1
fi
if [ -x scripts/fuzz.sh ]; then
  echo "== short fuzz run"
  scripts/fuzz.sh "${DIFFSCOPE_FUZZ_SECONDS:-30}"
fi
