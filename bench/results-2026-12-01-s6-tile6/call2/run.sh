#!/bin/bash
# tile6 confirm call (session 6, issue 14): the final fp32 tile (8x8 over 128 rows, fast SiLU): the fp32 / solver
# GPU tests, the fused fp32 bench rows (denoise 65,536 dim 2 and 16,384 dim 64 x 1000, solvers), ncu of dim 64.
R=$PWD; B=$R/.tile6; L=/tmp/t6; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope diffscope_gpu_tests; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; tar czf $OUT/t6_logs2.tgz -C /tmp t6; }
F='*fp32*:CudaSolversPaths.*:CudaSolversChunks.*:CudaClosedForm.*:CudaPdl.*:CudaSolversMixture.*'
timeout 40 $B/diffscope_gpu_tests --gtest_filter="$F" > $L/tests.txt 2>&1; echo "rc $?" >> $L/tests.txt; stamp tests
export DIFFSCOPE_BENCH_FUSED_FP32=1
for w in "denoise B=65536" "denoise B=16384" "solver "; do
  timeout 40 $B/diffscope bench --json --only "$w" > "$L/b_${w// /_}.json" 2>> $L/bench_err.txt
done; stamp bench
python3 -c "
import numpy as np
np.save('/tmp/x64.npy', np.random.default_rng(0).standard_normal((16384, 64)).astype(np.float32)); np.save('/tmp/t16384.npy', np.full(16384, 999, np.int64))"
M='regex:sm__inst_executed_pipe_(fma|lsu|alu|xu)\.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,regex:smsp__average_warps_issue_stalled_(not_selected|wait|dispatch_stall|short_scoreboard|barrier|mio_throttle|math_pipe_throttle)_per_issue_active.ratio'
timeout 30 /usr/local/cuda/bin/ncu --clock-control none -k regex:denoise_f32 -c 1 --metrics "$M" $B/diffscope denoise --model digits8x8 --x /tmp/x64.npy --t-start /tmp/t16384.npy --steps 16 --backend cuda --precision fp32 --out /tmp/o.npy > $L/ncu_d64.txt 2>&1
stamp ncu
cat $L/times.txt; grep -h "PASSED\|FAILED\|^rc" $L/tests.txt
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/t6/b_*.json')):
    for r in json.load(open(f))['rows']:
        if r['impl'] == 'fused': print('%-45s %12.1f us  p10 %.1f p90 %.1f err %.2e %s | %s' % (r['workload'], r['median_us'], r['p10_us'], r['p90_us'], r['rel_err'], r['path'], r['note'][-24:]))
PY
grep -h "duration\|issue_active\|pipe_\|stalled_\|inst_executed.sum\|ffma_pred" $L/ncu_d64.txt | awk '{print $1, $NF}'
