#!/bin/bash
# mlp6 call 2: confirm the refactored tensor-core loop (tests), bench B=2^20 default and the fp32 unroll16 variant,
# ncu of the bf16 prefetch kernel and of the unroll16 fp32 kernel.
R=$PWD; B=$R/.mlp6; L=/tmp/m6b; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope*; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; }
timeout 40 $B/diffscope_gpu_tests --gtest_filter='*Mlp3*:CudaLatencyKernels.TinyMlp*' > $L/tests.txt 2>&1; echo "rc $?" >> $L/tests.txt; stamp tests
timeout 20 $B/diffscope bench --json --only "mlp3 B=1048576" > $L/bench_new.json 2> $L/bench_new.err; stamp bench_new
DIFFSCOPE_MLP3_FP32=unroll16 timeout 20 $B/diffscope bench --json --only "mlp3 B=1048576" > $L/bench_u16.json 2> $L/bench_u16.err; stamp bench_u16
M='regex:sm__pipe_(fma|alu|tensor|lsu|shared).*cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,regex:smsp__average_warp_latency_issue_stalled_(barrier|short_scoreboard|long_scoreboard|mio_throttle|math_pipe_throttle|lg_throttle|wait).ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,dram__bytes_read.sum.per_second,dram__bytes_write.sum.per_second'
timeout 30 /usr/local/cuda/bin/ncu --clock-control none -k regex:kernel_mlp3_tc --launch-skip 9 -c 1 --metrics "$M" --section SpeedOfLight --section Occupancy $B/diffscope bench --quick --only "mlp3 B=1048576" > $L/ncu_bf16.txt 2>&1; stamp ncu_bf16
DIFFSCOPE_MLP3_FP32=unroll16 timeout 25 /usr/local/cuda/bin/ncu --clock-control none -k regex:mlp3_tiled -c 1 --metrics "$M" --section SpeedOfLight $B/diffscope bench --quick --only "mlp3 B=1048576" > $L/ncu_u16.txt 2>&1; stamp ncu_u16
tar czf $OUT/m6b_logs.tgz -C /tmp m6b
grep -h "PASSED\|FAILED\|^rc\|\[measured\] mlp3 B=\(65\|129\|70001\|4097\)" $L/tests.txt | head -30
for f in new u16; do python3 -c "
import json
for r in json.load(open('$L/bench_$f.json'))['rows']: print('$f', r['impl'], r['precision'], r['path'], round(r['median_us'],1), round(r['p10_us'],1), round(r['p90_us'],1), r['rel_err'])"; done
grep -hE "kernel_mlp3|gpu__time|pipe_(fma|lsu|alu|tensor|shared)_cycles|inst_executed_pipe_lsu|issue_active|dram__|warps_active|registers|stalled|bank_conflicts|Theoretical Occ|Achieved Occ|Block Limit" $L/ncu_bf16.txt $L/ncu_u16.txt | sed 's/  */ /g' | head -70
cat $L/times.txt
