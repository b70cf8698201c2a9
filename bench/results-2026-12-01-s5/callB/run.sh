#!/bin/bash
# (max-autotune, one step) building inductor's cache, returned as a tarball.
R=$PWD; B=$R/.lead/bin; L=/tmp/la; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope*; cd $R
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R DIFFSCOPE_BIN=$B/diffscope PYTHONUNBUFFERED=1
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; }
source .gpu/setup.sh > $L/setup.txt 2>&1; export LD_LIBRARY_PATH=$B:$LD_LIBRARY_PATH
nvidia-smi -L > $L/smi.txt
stamp tests
run_bench() { env $2 timeout 90 $B/diffscope bench --json --only "$3" > $L/bench_$1.json 2> $L/bench_$1.err; }
run_bench d2_default "X=1" "denoise B=65536"
run_bench d2_small "DIFFSCOPE_WGMMA_SMALL=cuda" "denoise B=65536"
run_bench d2_smallbf "DIFFSCOPE_WGMMA_SMALL=cuda DIFFSCOPE_WGMMA_SILU=bf16x2" "denoise B=65536"
run_bench d64_default "X=1" "denoise B=16384"
run_bench d64_bf "DIFFSCOPE_WGMMA_SILU=bf16x2" "denoise B=16384"
run_bench solvers "X=1" "solver "
stamp bench
# ncu placement: one launch each, 16 steps (denoise) or one call (mlp3)
python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(0)
np.save("/tmp/x2.npy", rng.standard_normal((65536, 2)).astype(np.float32))
np.save("/tmp/x64.npy", rng.standard_normal((16384, 64)).astype(np.float32))
np.save("/tmp/t65536.npy", np.full(65536, 999, np.int64)); np.save("/tmp/t16384.npy", np.full(16384, 999, np.int64))
np.save("/tmp/x1m.npy", rng.standard_normal((1 << 20, 48)).astype(np.float32))
PY
NCU=/usr/local/cuda/bin/ncu
M='regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active,regex:sm__inst_executed_pipe_.*avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sectors.avg.pct_of_peak_sustained_elapsed'
S='--section SpeedOfLight --section WarpStateStats --section Occupancy --section LaunchStats'
ncu1() { local name=$1 k=$2; shift 2; env $VARS timeout 60 $NCU --clock-control none -k regex:$k -c 1 --metrics "$M" $S "$@" > $L/ncu_$name.txt 2>&1; }
VARS="DIFFSCOPE_WGMMA_SMALL=cuda" ncu1 wg_small wgmma $B/diffscope denoise --model moons --x /tmp/x2.npy --t-start /tmp/t65536.npy --steps 16 --backend cuda --precision bf16 --out /tmp/o.npy
VARS="DIFFSCOPE_WGMMA_SMALL=cuda DIFFSCOPE_WGMMA_SILU=bf16x2" ncu1 wg_smallbf wgmma $B/diffscope denoise --model moons --x /tmp/x2.npy --t-start /tmp/t65536.npy --steps 16 --backend cuda --precision bf16 --out /tmp/o.npy
VARS="X=1" ncu1 wg_d64 wgmma $B/diffscope denoise --model digits8x8 --x /tmp/x64.npy --t-start /tmp/t16384.npy --steps 16 --backend cuda --precision bf16 --out /tmp/o.npy
VARS="X=1" ncu1 tf32_d2 denoise_tc $B/diffscope denoise --model moons --x /tmp/x2.npy --t-start /tmp/t65536.npy --steps 16 --backend cuda --precision tf32 --out /tmp/o.npy
VARS="X=1" ncu1 fp32_d2 denoise_f32 $B/diffscope denoise --model moons --x /tmp/x2.npy --t-start /tmp/t65536.npy --steps 16 --backend cuda --precision fp32 --out /tmp/o.npy
VARS="X=1" ncu1 tf32_d64 denoise_tc $B/diffscope denoise --model digits8x8 --x /tmp/x64.npy --t-start /tmp/t16384.npy --steps 16 --backend cuda --precision tf32 --out /tmp/o.npy
W=tests/data/golden/mlp3_b16_48_64_40_24_weights.safetensors
for p in bf16 tf32 fp32; do VARS="X=1" ncu1 mlp3_$p mlp3 $B/diffscope mlp3 --weights $W --x /tmp/x1m.npy --backend cuda --precision $p --out /tmp/o.npy; done
stamp ncu
tar czf $OUT/callB_logs.tgz -C /tmp la
tar czf $OUT/callB_logs.tgz -C /tmp la
tar czf $OUT/callB_logs.tgz -C /tmp la
