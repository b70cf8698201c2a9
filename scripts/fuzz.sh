#!/usr/bin/env bash
# fuzz.sh — build the libFuzzer targets (clang 14, ASan + UBSan) and run each for N seconds.
# Usage: scripts/fuzz.sh [seconds-per-target, default 60]
# Environment: DIFFSCOPE_FUZZ_BUILD (build folder, default build-fuzz), FUZZ_JOBS (parallel workers, default 1).
# The seed corpus in tests/fuzz/corpus/<target> is read, never written; new inputs go to
# <build>/fuzz-work/<target>/corpus and crashes to <build>/fuzz-work/<target>/artifacts.
# Exit status: non-zero if a target crashed (the crashing input is in artifacts/).
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DIFFSCOPE_FUZZ_BUILD:-$root/build-fuzz}"
jobs="${FUZZ_JOBS:-1}"

cc_default=$(command -v clang || command -v clang-14)
cxx_default=$(command -v clang++ || command -v clang++-14)
CC="${CC:-$cc_default}" CXX="${CXX:-$cxx_default}" cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDIFFSCOPE_FUZZ=ON -DDIFFSCOPE_CUDA=OFF -DDIFFSCOPE_GUI=OFF >/dev/null
cmake --build "$build" --target fuzz_safetensors fuzz_npy fuzz_scheduler_config -j 2

status=0
for target in safetensors npy scheduler_config; do
  work="$build/fuzz-work/$target"
  mkdir -p "$work/corpus" "$work/artifacts"
  echo "== fuzz_$target for ${seconds}s"
  set +e
  # from the work folder: libFuzzer's -jobs writes fuzz-N.log into the working directory, not the source tree
  (cd "$work" && "$build/bin/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
    -print_final_stats=1 -jobs="$jobs" -workers="$jobs" \
    -dict="$root/tests/fuzz/$target.dict" -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "$root/tests/fuzz/corpus/$target" >"$work/log.txt" 2>&1)
  rc=$?
  set -e
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|SUMMARY" "$work/log.txt" || true
  if [ "$rc" -ne 0 ]; then
    echo "fuzz_$target: FAILED (exit $rc); see $work/log.txt and $work/artifacts/"
    status=1
  else
    echo "fuzz_$target: no crash; corpus $(ls "$work/corpus" | wc -l) inputs"
  fi
done
exit "$status"
