#!/usr/bin/env bash
# gpu_sanitize.sh OUTDIR — issue 6's compute-sanitizer pass on an NVIDIA machine (the H200: see
# /work/shared/gpu/README.md), from the repository root, with DIFFSCOPE_BIN_DIR holding diffscope and
# diffscope_gpu_tests from a CUDA build. Runs memcheck, racecheck, synccheck and initcheck (the four at once,
# one process each) over
#   1. the GPU tests at small shapes (every kernel path: B <= 333, S <= 1000; the goldens, the closed forms, the
#      device API), and
#   2. a short headless app session on the CUDA backend with interop (tests/ui/scripts/sanitize_gpu.txt);
# and writes OUTDIR/<tool>_{tests,app}.log plus OUTDIR/summary.txt ("ERROR SUMMARY" of each run).
set -u
out=${1:?usage: gpu_sanitize.sh OUTDIR}
bin=${DIFFSCOPE_BIN_DIR:?set DIFFSCOPE_BIN_DIR}
mkdir -p "$out"
small='*/B1_*:*/B3_*:*/B5_*:*/B6_*:*/B7_*:*/B8_*:*/B9_*:*/B13_*:*/B16_*:*/B33_*:*/B37_*:*/B129_*:*/B131_*:*/B333_*'
small+=':CudaClosedForm.*:CudaDeviceApi.*:CudaPaths.*:CudaGolden.*:CudaUnfused.*'
# SANITIZE_FILTER replaces the test filter (racecheck and synccheck run the 1000-step cases for many minutes);
# SANITIZE_TOOLS the tools; SANITIZE_APP_TIMEOUT the app run's limit (s).
small=${SANITIZE_FILTER:-$small}
extra() {
  case $1 in
    racecheck) echo "--racecheck-report all" ;;
    *) echo "" ;;
  esac
}
for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
  (
    date -u +"start %T" >"$out/${tool}_time.txt"
    # shellcheck disable=SC2046
    timeout 500 compute-sanitizer --tool "$tool" $(extra "$tool") --error-exitcode 9 \
      "$bin/diffscope_gpu_tests" --gtest_filter="$small" >"$out/${tool}_tests.log" 2>&1
    echo "rc=$?" >>"$out/${tool}_tests.log"
    timeout "${SANITIZE_APP_TIMEOUT:-300}" compute-sanitizer --tool "$tool" $(extra "$tool") --error-exitcode 9 \
      "$bin/diffscope" gui --headless --backend cuda --no-persist --size 640x480 --model moons \
      --script tests/ui/scripts/sanitize_gpu.txt >"$out/${tool}_app.log" 2>&1
    echo "rc=$?" >>"$out/${tool}_app.log"
    date -u +"end %T" >>"$out/${tool}_time.txt"
  ) &
done
wait
for f in "$out"/*_tests.log "$out"/*_app.log; do
  echo "$(basename "$f"): $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$f" | tail -1) $(grep -c '^\[       OK \]' "$f") tests ok," \
       "$(grep -c '^\[  FAILED  \]' "$f") failed, $(tail -1 "$f")"
done | tee "$out/summary.txt"
