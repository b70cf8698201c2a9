#!/bin/bash
# Session 5 final call 2: issue 14's table in one call — our `diffscope bench --json` and PyTorch eager, CUDA graph,
# torch.compile(max-autotune) of one step, and compile + CUDA graph, same weights and shapes.
R=$PWD; B=$R/.lead/bin; L=/tmp/f2; mkdir -p $L
cd $B && gunzip -f *.gz 2>/dev/null; chmod +x diffscope* 2>/dev/null; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R PYTHONUNBUFFERED=1
nvidia-smi -L > $L/smi.txt
timeout ${F2_LIMIT:-500} python3 bench/torch_compare.py --diffscope $B/diffscope --compile --out $L > $L/torch.txt 2>&1; echo "rc $?" >> $L/torch.txt
grep -v "^  triton_mm\|^AUTOTUNE\|^strides\|^dtypes\|^SingleProcess\|Layout conflict\|^Autotune Choices\|^{\"num_choices" $L/torch.txt > $L/torch_short.txt
tar czf $OUT/f2_logs.tgz -C /tmp f2
tail -22 $L/torch_short.txt
