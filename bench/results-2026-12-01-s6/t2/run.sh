#!/bin/bash
# Session 6 final call T2: issue 14's whole table in one call with inductor's cache warm (T1): our `diffscope bench
# --json` and PyTorch eager, CUDA graph, torch.compile(max-autotune) of one step, compile + CUDA graph.
R=$PWD; B=$R/.lead6/bin; L=/tmp/t2; mkdir -p $L
cd $B && gunzip -f *.gz 2>/dev/null; chmod +x diffscope* 2>/dev/null; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R PYTHONUNBUFFERED=1
nvidia-smi -L > $L/smi.txt
du -sh bench/.inductor_cache > $L/cache.txt 2>&1
T0=$(date +%s)
timeout ${T2_LIMIT:-540} python3 bench/torch_compare.py --diffscope $B/diffscope --compile --out $L > $L/torch.txt 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $L/torch.txt
grep -v "^  triton_mm\|^AUTOTUNE\|^strides\|^dtypes\|^SingleProcess\|Layout conflict\|^Autotune Choices\|^{\"num_choices" $L/torch.txt > $L/torch_short.txt
tar czf $OUT/t2_logs.tgz -C /tmp t2
cp $L/torch_compare.json $OUT/ 2>/dev/null
cat $L/cache.txt; grep -o "'compile_s': [0-9.]*" $L/torch_short.txt | tr '\n' ' '; echo
tail -24 $L/torch_short.txt
