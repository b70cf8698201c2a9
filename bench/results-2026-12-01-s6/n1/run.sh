#!/bin/bash
# Session 6 call N1: ncu of the MLP's tensor-core kernel at B = 2^20 as the final build dispatches it (tf32: two
# tiles per warp; bf16: one tile, x in shared memory), one launch each after two warm-up launches.
R=$PWD; B=$R/.lead6/bin; L=/tmp/n1; mkdir -p $L
cd $B && gunzip -f *.gz 2>/dev/null; chmod +x diffscope* 2>/dev/null; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R
M='regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active,regex:sm__inst_executed_pipe_.*avg.pct_of_peak_sustained_active,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed'
for p in Tf32Tag Bf16Tag; do
  timeout 100 /usr/local/cuda/bin/ncu --clock-control none --kernel-name-base demangled -k regex:"mlp3_tc.*$p" --launch-skip 2 -c 1 \
    --metrics "$M" --section SpeedOfLight --section WarpStateStats --section Occupancy \
    $B/diffscope bench --json --quick --only "mlp3 B=1048576" > $L/ncu_$p.txt 2>&1
done
tar czf $OUT/n1_logs.tgz -C /tmp n1
for p in Tf32Tag Bf16Tag; do echo "== $p"; grep -E "kernel_mlp3|Duration|Registers|pct_of_peak|Stall|Achieved Occupancy|Theoretical Occupancy|Issue Slot|DRAM Throughput|Warp Cycles Per Issued" $L/ncu_$p.txt | head -60; done
