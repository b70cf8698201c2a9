#!/bin/bash
# mlpbf6 (one call): mlp3 GPU tests, bench rows B=2^20 for every DIFFSCOPE_MLP3_TC_TILES variant, ncu of the bf16
# default, sanitizers on the new kernels at small shapes.
R=$PWD; B=$R/.mlpbf6; L=/tmp/mb6; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope*; cd $R
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; }
timeout 40 $B/diffscope_gpu_tests --gtest_filter='*Mlp3*' > $L/tests.txt 2>&1; echo "rc $?" >> $L/tests.txt; stamp tests
source .gpu/setup.sh > $L/setup.txt 2>&1
for v in default 1 1s 2 2r pf0; do
  case $v in default) E="";; pf0) E="DIFFSCOPE_MLP3_TC_PREFETCH=0";; *) E="DIFFSCOPE_MLP3_TC_TILES=$v";; esac
  env $E timeout 20 $B/diffscope bench --json --only "mlp3 B=1048576" > $L/bench_$v.json 2> $L/bench_$v.err; stamp bench_$v
done
M='gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warp_latency_issue_stalled_short_scoreboard,smsp__average_warp_latency_issue_stalled_long_scoreboard,smsp__average_warp_latency_issue_stalled_wait,smsp__average_warp_latency_issue_stalled_mio_throttle,smsp__average_warp_latency_issue_stalled_math_pipe_throttle,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum'
timeout 20 /usr/local/cuda/bin/ncu --clock-control none -k 'regex:kernel_mlp3_tc_mb' -c 1 --metrics "$M" --section WarpStateStats $B/diffscope bench --quick --only "mlp3 B=1048576" > $L/ncu_bf16.txt 2>&1; stamp ncu
F='Mlp3TcTiles.*:*Mlp3VsFloat64*B4097_48_64_bf16:*Mlp3VsFloat64*B4097_48_64_tf32'
timeout 20 compute-sanitizer --tool memcheck $B/diffscope_gpu_tests --gtest_filter="$F" > $L/memcheck.txt 2>&1
timeout 20 compute-sanitizer --tool racecheck $B/diffscope_gpu_tests --gtest_filter="$F" > $L/racecheck.txt 2>&1; stamp sanitizers
tar czf $OUT/mb6_logs.tgz -C /tmp mb6
grep -h "PASSED\|FAILED\|^rc\|\[measured\] mlp3 B=\(70001\|4097\)" $L/tests.txt | head -40
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $L/memcheck.txt $L/racecheck.txt
python3 -c "
import json
for f in ['default','1','1s','2','2r','pf0']:
  try: d=json.load(open('$L/bench_'+f+'.json'))
  except Exception as e: print(f, 'ERR', e); continue
  for r in d['rows']:
    if r.get('path')=='tensor-core': print(f, r.get('precision'), round(r.get('median_us'),2), round(r.get('p10_us'),2), round(r.get('p90_us'),2), '%.3e'%r.get('rel_err'))
"
grep -E "gpu__time|issue_active|dram__|warps_active|registers|hmma|stalled|bank_conflicts" $L/ncu_bf16.txt | sed 's/  */ /g' | head -20
cat $L/times.txt
