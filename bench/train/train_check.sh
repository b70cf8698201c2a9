#!/usr/bin/env bash
# train_check.sh — the CUDA trainer on the GPU machine in one call (issue 30's targets): the GPU tests of the trainer,
# the training-step rows beside PyTorch (bench/torch_compare.py --train) and the time to a good model
# (bench/train/time_to_quality.py), each log under OUT.
#
# Usage, from the repository root on the H200, with the executables built here (CUDA build) and carried in BIN
# (default .gpu/bin-k: diffscope and diffscope_gpu_tests; .gpu/setup.sh, when carried, installs the GL loader and
# libraries they link; bench/device_env.sh sets the library paths):
#   bench/train/train_check.sh [PHASES] [BIN] [OUT]
# PHASES: a comma-separated subset of tests, bench, compile, quality (default tests,bench,quality: about 3 minutes;
# `compile` adds PyTorch's torch.compile rows, whose max-autotune takes minutes: run it in a call of its own).
# OUT: $OUT where the device runner sets it, else /tmp/train_check. TIME_TO_QUALITY_RECIPE: extra `diffscope train`
# options for the time-to-quality runs (default: the trainer's defaults).
#
# Writes OUT/gpu_tests.log, OUT/torch_compare_train.log + torch_compare.json (both sides' rows),
# OUT/time_to_quality.log + time_to_quality/time_to_quality.json, and OUT/summary.txt (the lines to read first).
# Exit 0 when every phase ran and the tests passed; 1 otherwise (the summary says which).
set -uo pipefail
cd "$(dirname "$0")/../.."
phases=${1:-tests,bench,quality}
bin=${2:-.gpu/bin-k}
out=${3:-${OUT:-/tmp/train_check}}
mkdir -p "$out"
[ -f .gpu/setup.sh ] && source .gpu/setup.sh > /dev/null  # the GL loader and the libraries the executables link
source bench/device_env.sh
summary="$out/summary.txt"
: > "$summary"
status=0
has() { [[ ",$phases," == *",$1,"* ]]; }
note() { echo "$*" | tee -a "$summary"; }

if has tests; then
  timeout 300 "$bin/diffscope_gpu_tests" --gtest_filter='*CudaTrainer*' > "$out/gpu_tests.log" 2>&1
  rc=$?
  note "tests: rc $rc; $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/gpu_tests.log" | tr '\n' ' ')"
  [ $rc -eq 0 ] || status=1
fi
if has bench || has compile; then
  compile_flag=()
  has compile && compile_flag=(--compile)
  timeout 580 python3 bench/torch_compare.py --train --precisions fp32,bf16 "${compile_flag[@]}" \
    --diffscope "$bin/diffscope" --out "$out" > "$out/torch_compare_train.log" 2>&1
  rc=$?
  note "bench: rc $rc (ratio table: the last lines of torch_compare_train.log)"
  tail -6 "$out/torch_compare_train.log" >> "$summary"
  [ $rc -eq 0 ] || status=1
fi
if has quality; then
  timeout 400 python3 bench/train/time_to_quality.py --diffscope "$bin/diffscope" --out "$out/time_to_quality" \
    --recipe "${TIME_TO_QUALITY_RECIPE:-}" > "$out/time_to_quality.log" 2>&1
  rc=$?
  note "quality: rc $rc"
  grep -E '^(epsilon|flow) ' "$out/time_to_quality.log" >> "$summary"
  [ $rc -eq 0 ] || status=1
fi
cat "$summary"
exit $status
