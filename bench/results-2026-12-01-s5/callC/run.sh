#!/bin/bash
# Session 5 call C: the FMA-pipe tanh variants of the wgmma kernel: tests, bench rows, ncu.
R=$PWD; B=$R/.lead/bin; L=/tmp/lc; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope*; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R DIFFSCOPE_BIN=$B/diffscope
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; }
timeout 60 $B/diffscope_gpu_tests --gtest_filter='CudaPaths.WgmmaPoly*' > $L/tests.txt 2>&1; echo "rc $?" >> $L/tests.txt
stamp tests
run_bench() { env $2 timeout 90 $B/diffscope bench --json --only "$3" > $L/bench_$1.json 2> $L/bench_$1.err; }
run_bench d2_p2 "DIFFSCOPE_WGMMA_POLY=2" "denoise B=65536"
run_bench d2_p4 "DIFFSCOPE_WGMMA_POLY=4" "denoise B=65536"
run_bench d64_p2 "DIFFSCOPE_WGMMA_POLY=2" "denoise B=16384"
run_bench d64_p4 "DIFFSCOPE_WGMMA_POLY=4" "denoise B=16384"
stamp bench
python3 -c "
import numpy as np; rng = np.random.default_rng(0)
np.save('/tmp/x2.npy', rng.standard_normal((65536, 2)).astype(np.float32)); np.save('/tmp/t65536.npy', np.full(65536, 999, np.int64))"
M='regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active,regex:sm__inst_executed_pipe_.*avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active'
for v in 0 2 4; do
  DIFFSCOPE_WGMMA_POLY=$v timeout 60 /usr/local/cuda/bin/ncu --clock-control none -k regex:wgmma -c 1 --metrics "$M" --section WarpStateStats --section SpeedOfLight $B/diffscope denoise --model moons --x /tmp/x2.npy --t-start /tmp/t65536.npy --steps 16 --backend cuda --precision bf16 --out /tmp/o.npy > $L/ncu_p$v.txt 2>&1
done
stamp ncu
tar czf $OUT/callC_logs.tgz -C /tmp lc
cat $L/times.txt; grep -h "PASSED\|FAILED\|^rc\|measured" $L/tests.txt
for f in $L/bench_*.json; do echo $f; python3 -c "
import json,sys
for r in json.load(open(sys.argv[1]))['rows']:
  if r['impl']=='fused' and r['precision']=='bf16': print(r['workload'],r['precision'],r.get('path'),round(r['median_us'],1),'%.2e'%r['rel_err'])" $f; done
for v in 0 2 4; do grep -E "Duration|pipe_tensor_cycles_active|inst_executed_pipe_xu.avg|pipe_fma_cycles_active|issue_active" $L/ncu_p$v.txt | sed 's/  */ /g'; done
