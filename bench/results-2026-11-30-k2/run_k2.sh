#!/bin/bash
# kernels2 device run (from the repository root on the H200): benchmarks of the changed workloads (new binary and
# the previous one, c186933), GPU tests (8 shards in parallel) + sanitizers on the changed kernels, then --diag.
B=.gpu/bin-k2
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DIFFSCOPE_ROOT="$PWD" PYTHONUNBUFFERED=1 OMP_NUM_THREADS=8
S=$OUT/summary.txt
{ date -u; nvidia-smi -L | head -1; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv; } > $S 2>&1
T0=$(date +%s)
for v in diffscope diffscope_before; do
  { echo "##### $v"; timeout 30 $B/$v bench --only "B=8 dim"; timeout 20 $B/$v bench --only "mlp3 B=16 "; } > $OUT/bench_$v.txt 2>&1
  echo "$v bench done after $(( $(date +%s) - T0 )) s" >> $S
done
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 90 $B/diffscope_gpu_tests > /tmp/t$i.log 2>&1 &
done
( CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  for tool in memcheck racecheck; do
    timeout 40 $CS --tool $tool $B/diffscope_gpu_tests --gtest_filter='*B8_d64_h256_S16_t0_fp32_cluster:*B8_d52*:*B7_d2_h256_S70*:*ddpm_i8_fp32:*Mlp3VsFloat64*B13_48*:*Mlp3VsFloat64*B16_48_64_fp32:*Mlp3VsFloat64*B16_7*:*Mlp3VsFloat64*B9_20*' 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|Invalid|PASSED|FAILED|tests ran" | head -30 | sed "s/^/[$tool] /"
  done > $OUT/sanitizers.log 2>&1 ) &
wait
for i in 0 1 2 3 4 5 6 7; do echo "=== shard $i"; cat /tmp/t$i.log; done > $OUT/gpu_tests.log
echo "tests done after $(( $(date +%s) - T0 )) s" >> $S
grep -hE "^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]|tests? ran" /tmp/t*.log >> $S
for v in diffscope diffscope_before; do
  { echo "##### $v diag"; timeout 30 $B/$v bench --diag; } > $OUT/diag_$v.txt 2>&1
  echo "$v diag done after $(( $(date +%s) - T0 )) s" >> $S
done
{ echo "##### diffscope, DIFFSCOPE_CLUSTER_SIZE=8"; DIFFSCOPE_CLUSTER_SIZE=8 timeout 20 $B/diffscope bench --only "B=8 dim"; } > $OUT/bench_c8.txt 2>&1
echo "c8 done after $(( $(date +%s) - T0 )) s" >> $S
