#!/bin/bash
# After merging kern14b: one H200 call from the repository root, executables built at the merge commit (90a,
# Release) in BIN (default .gpu/bin-k, with libgomp.so.1 beside them or in .gpu/bin-k/lib). About 2.5 minutes.
# Logs in $OUT (or /tmp/k14b-rerun). Then run the speed gate (bench/gate/gate.sh) with --write-baseline: the bf16
# large-batch rows are faster (31.1 -> 19.2 ms, 12.4 -> 6.6 ms).
BIN=${BIN:-$PWD/.gpu/bin-k}; L=${OUT:-/tmp/k14b-rerun}; mkdir -p "$L"
source bench/device_env.sh; source .gpu/setup.sh >/dev/null 2>&1
export LD_LIBRARY_PATH=$BIN:$LD_LIBRARY_PATH DIFFSCOPE_BIN=$BIN/diffscope
# 1. every GPU test (default: wgmma with ping-pong for bf16 B >= 4096), and the small-dim variant's own test
timeout 150 $BIN/diffscope_gpu_tests > $L/tests_all.txt 2>&1; echo "rc $?" >> $L/tests_all.txt
# 2. the unmeasured small-dim variant (layers 1 and 3 on CUDA cores): its tests, then every wgmma test under it
timeout 60 $BIN/diffscope_gpu_tests --gtest_filter='CudaPaths.WgmmaSmallDim*' > $L/tests_small.txt 2>&1; echo "rc $?" >> $L/tests_small.txt
DIFFSCOPE_WGMMA_SMALL=cuda timeout 60 $BIN/diffscope_gpu_tests --gtest_filter='*wgmma*:*B65536*:Cuda/StepsVsFloat64.*_bf16' > $L/tests_small_env.txt 2>&1; echo "rc $?" >> $L/tests_small_env.txt
# 3. bench: default, the small-dim variant, and mma.sync (before)
for w in "denoise B=65536" "denoise B=16384"; do n=$(echo $w | tr -dc '0-9')
  timeout 60 $BIN/diffscope bench --json --only "$w" > $L/bench_default_$n.json 2>/dev/null
  DIFFSCOPE_WGMMA=0 timeout 60 $BIN/diffscope bench --json --only "$w" > $L/bench_mmasync_$n.json 2>/dev/null
done
DIFFSCOPE_WGMMA_SMALL=cuda timeout 60 $BIN/diffscope bench --json --only "denoise B=65536" > $L/bench_small_65536.json 2>/dev/null
# 4. sanitizers on the ping-pong default and the small-dim variant at small shapes
timeout 60 compute-sanitizer --tool memcheck $BIN/diffscope_gpu_tests --gtest_filter='CudaPaths.WgmmaPingPong*' > $L/memcheck_pp.txt 2>&1
DIFFSCOPE_WGMMA_SMALL=cuda timeout 60 compute-sanitizer --tool memcheck $BIN/diffscope_gpu_tests --gtest_filter='*B1_d2*wgmma*:*B4097_d2_h256_S16_t1_bf16_wgmma' > $L/memcheck_small.txt 2>&1
timeout 60 compute-sanitizer --tool racecheck $BIN/diffscope_gpu_tests --gtest_filter='*B130_d16*wgmma*' > $L/racecheck_pp.txt 2>&1
grep -h "PASSED\|FAILED\|ERROR SUMMARY\|RACECHECK SUMMARY\|^rc" $L/*.txt
