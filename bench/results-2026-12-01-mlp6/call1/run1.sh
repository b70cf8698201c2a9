#!/bin/bash
# mlp6 call 1: mlp3 GPU tests, bench rows B=2^20 (new defaults and old kernels via knobs), ncu of the new kernels, sanitizers.
R=$PWD; B=$R/.mlp6; L=/tmp/m6; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope*; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; }
nvidia-smi -L > $L/smi.txt
timeout 50 $B/diffscope_gpu_tests --gtest_filter='*Mlp3*:CudaLatencyKernels.TinyMlp*' > $L/tests.txt 2>&1; echo "rc $?" >> $L/tests.txt; stamp tests
timeout 25 $B/diffscope bench --json --only "mlp3 B=1048576" > $L/bench_new.json 2> $L/bench_new.err; stamp bench_new
DIFFSCOPE_MLP3_FP32=rows DIFFSCOPE_MLP3_TC_PREFETCH=0 timeout 25 $B/diffscope bench --json --only "mlp3 B=1048576" > $L/bench_old.json 2> $L/bench_old.err; stamp bench_old
M='regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active,regex:sm__inst_executed_pipe_.*avg.pct_of_peak_sustained_active,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warp_latency_issue_stalled_barrier,smsp__average_warp_latency_issue_stalled_short_scoreboard,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_mio_throttle,smsp__average_warp_latency_issue_stalled_math_pipe_throttle,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum'
timeout 35 /usr/local/cuda/bin/ncu --clock-control none -k regex:mlp3_tiled -c 1 --metrics "$M" --section SpeedOfLight --section WarpStateStats $B/diffscope bench --quick --only "mlp3 B=1048576" > $L/ncu_f32.txt 2>&1; stamp ncu_f32
timeout 30 /usr/local/cuda/bin/ncu --clock-control none -k 'regex:kernel_mlp3_tc.*Lb1' -c 2 --metrics "$M" --section SpeedOfLight --section WarpStateStats $B/diffscope bench --quick --only "mlp3 B=1048576" > $L/ncu_tc.txt 2>&1; stamp ncu_tc
F='*Mlp3VsFloat64*B65_48_64_fp32:*Mlp3VsFloat64*B129_48_64_fp32:*Mlp3VsFloat64*B4097_48_64_bf16:*Mlp3VsFloat64*B4097_48_64_tf32'
timeout 25 compute-sanitizer --tool memcheck $B/diffscope_gpu_tests --gtest_filter="$F" > $L/memcheck.txt 2>&1
timeout 25 compute-sanitizer --tool racecheck $B/diffscope_gpu_tests --gtest_filter="$F" > $L/racecheck.txt 2>&1; stamp sanitizers
tar czf $OUT/m6_logs.tgz -C /tmp m6
grep -h "PASSED\|FAILED\|^rc\|\[measured\] mlp3 B=\(65\|129\|70001\|4097\)" $L/tests.txt | head -30
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $L/memcheck.txt $L/racecheck.txt
python3 -c "
import json
for f in ['new','old']:
  for r in json.load(open('$L/bench_'+f+'.json'))['rows'] if isinstance(json.load(open('$L/bench_'+f+'.json')),dict) else json.load(open('$L/bench_'+f+'.json')):
    print(f, r.get('impl'), r.get('precision'), r.get('path'), r.get('median_us'), r.get('p10_us'), r.get('p90_us'), r.get('rel_err'))
" 2>&1 | tail -14
grep -E "gpu__time|pipe_(fma|lsu|alu|fmaheavy|tensor).*cycles|issue_active|dram__|warps_active|registers|stalled|bank_conflicts|Duration" $L/ncu_f32.txt $L/ncu_tc.txt | sed 's/  */ /g' | head -60
cat $L/times.txt; tail -3 $L/bench_new.err
