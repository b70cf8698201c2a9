#!/bin/bash
# Session 6 final call T1: fill inductor's cache (bench/.inductor_cache, kept on the warm machine for the next call)
# by compiling every workload of issue 14's table with max-autotune; nothing is timed here.
R=$PWD; L=/tmp/t1; mkdir -p $L
source .gpu/setup.sh > $L/setup.txt 2>&1
export PYTHONUNBUFFERED=1 DIFFSCOPE_ROOT=$R
nvidia-smi -L > $L/smi.txt
T0=$(date +%s)
timeout ${T1_LIMIT:-560} python3 bench/torch_compare.py --warm-cache > $L/warm.txt 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $L/warm.txt
du -sh bench/.inductor_cache >> $L/warm.txt 2>&1
grep -v "^  triton_mm\|^AUTOTUNE\|^strides\|^dtypes\|^SingleProcess\|Layout conflict\|^Autotune Choices\|^{\"num_choices" $L/warm.txt > $L/warm_short.txt
tar czf $OUT/t1_logs.tgz -C /tmp t1
grep "warm \|^rc\|inductor_cache\|Error\|error" $L/warm_short.txt | tail -30
