#!/bin/bash
# tile6 (session 6, issue 14): the fp32 tile's variants A/B on the H200 in one call: GPU tests (all, default tile;
# fp32 + solver tests per variant), bench rows (fused fp32 only) per variant, ncu of the default on 16 steps.
R=$PWD; B=$R/.tile6; L=/tmp/t6; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope diffscope_gpu_tests; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; tar czf $OUT/t6_logs.tgz -C /tmp t6; }
F='*fp32*:CudaSolversPaths.*:CudaSolversChunks.*:CudaClosedForm.*:CudaPdl.*:CudaSolversMixture.*'

nvidia-smi -L > $L/smi.txt 2>&1
timeout 60 $B/diffscope_gpu_tests --gtest_filter="$F" > $L/tests_A.txt 2>&1; echo "rc $?" >> $L/tests_A.txt; stamp tests_A
export DIFFSCOPE_BENCH_FUSED_FP32=1
bench() { # variant tag quick?
  for w in "denoise B=65536" "denoise B=16384" "solver "; do
    DIFFSCOPE_F32_TILE=$1 timeout 60 $B/diffscope bench --json $3 --only "$w" > "$L/b_$2_${w// /_}.json" 2>> $L/bench_err.txt
  done; stamp "bench $2"; }
bench 8x8 A ""
bench v1 v1q --quick
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(0)
np.save("/tmp/x2.npy", rng.standard_normal((65536, 2)).astype(np.float32))
np.save("/tmp/x64.npy", rng.standard_normal((16384, 64)).astype(np.float32))
np.save("/tmp/t65536.npy", np.full(65536, 999, np.int64)); np.save("/tmp/t16384.npy", np.full(16384, 999, np.int64))
PY
NCU=/usr/local/cuda/bin/ncu
M='regex:sm__inst_executed_pipe_(fma|fmaheavy|fmalite|lsu|alu|xu|cbu|adu)\.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum,regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio'
ncu1() { local name=$1; shift; timeout 40 $NCU --clock-control none -k regex:denoise_f32 -c 1 --metrics "$M" --section SpeedOfLight --section WarpStateStats --section LaunchStats "$@" > $L/ncu_$name.txt 2>&1; }
ncu1 A_d2 $B/diffscope denoise --model moons --x /tmp/x2.npy --t-start /tmp/t65536.npy --steps 16 --backend cuda --precision fp32 --out /tmp/o.npy
ncu1 A_d64 $B/diffscope denoise --model digits8x8 --x /tmp/x64.npy --t-start /tmp/t16384.npy --steps 16 --backend cuda --precision fp32 --out /tmp/o.npy
stamp ncu
bench 8x16 Bq --quick
bench 8x8fast AFq --quick
bench 8x8 Aq --quick
for v in 8x16 8x8fast; do DIFFSCOPE_F32_TILE=$v timeout 40 $B/diffscope_gpu_tests --gtest_filter="$F" > $L/tests_$v.txt 2>&1; echo "rc $?" >> $L/tests_$v.txt; done; stamp tests_variants
cat $L/times.txt; grep -h "PASSED\|FAILED\|^rc" $L/tests_*.txt
python3 - <<'PY'
import json, glob
for f in sorted(glob.glob('/tmp/t6/b_*.json')):
    try: rows = json.load(open(f))['rows']
    except Exception as e: print(f, 'ERR', e); continue
    for r in rows:
        if r['impl'] == 'fused' and r['precision'] == 'fp32': print('%-40s %-45s %12.1f us  p10 %.1f p90 %.1f err %.2e %s' % (f.split('/')[-1][:40], r['workload'], r['median_us'], r['p10_us'], r['p90_us'], r['rel_err'], r['path']))
PY
grep -h "gpu__time_duration\|issue_active\|pipe_fma.avg\|pipe_lsu\|Registers Per\|stalled_.*ratio\|inst_executed.sum\|ffma_pred" $L/ncu_*.txt | awk '{print $1, $NF}'
