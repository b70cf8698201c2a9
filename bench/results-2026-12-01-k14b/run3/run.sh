#!/bin/bash
# kern14b device run 3: ping-pong check, bench rows, all GPU tests, solver timings, ncu of the wgmma kernel.
export LD_LIBRARY_PATH=$PWD/.k14:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$PWD
L=/tmp/k14logs; rm -rf $L; mkdir -p $L; B=$PWD/.k14
cd .k14 && gunzip -f *.gz && chmod +x diffscope diffscope_gpu_tests && cd ..
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$PWD/.k14:$LD_LIBRARY_PATH DIFFSCOPE_BIN=$B/diffscope
WF='*wgmma*:*B4099_d2*:*B65536*:Cuda/StepsVsFloat64.*_bf16:CudaPaths.*'
DIFFSCOPE_WGMMA_PINGPONG=1 timeout 45 $B/diffscope_gpu_tests --gtest_filter="$WF" > $L/tests_pp.txt 2>&1; pprc=$?; echo "rc $pprc" >> $L/tests_pp.txt
for w in "denoise B=65536" "denoise B=16384"; do
  n=$(echo $w | tr -dc '0-9')
  timeout 60 $B/diffscope bench --json --only "$w" > $L/bench_default_$n.json 2> $L/bench_default_$n.err
  if [ $pprc = 0 ]; then
    DIFFSCOPE_WGMMA_PINGPONG=1 timeout 60 $B/diffscope bench --json --only "$w" > $L/bench_pp_$n.json 2> $L/bench_pp_$n.err
    [ $n = 65536 ] && DIFFSCOPE_WGMMA_PINGPONG=1 DIFFSCOPE_WGMMA_SILU=bf16x2 timeout 60 $B/diffscope bench --json --only "$w" > $L/bench_ppbf_$n.json 2> $L/bench_ppbf_$n.err
  fi
done
timeout 120 $B/diffscope_gpu_tests > $L/tests_all.txt 2>&1; echo "rc $?" >> $L/tests_all.txt
for s in "ddim default 1" "ddim default 300" "euler-ancestral default 300" "dpmpp-2m default 300" "dpmpp-2m-sde default 300" "heun karras 300"; do
  set -- $s; TIMEFORMAT="$1 $2 steps=$3 wall %R s"
  { time $B/diffscope sample --model moons --n 1000000 --steps $3 --sampler $1 --spacing $2 --backend cuda --precision fp32 --out /tmp/k14_s.npy >> $L/sample_out.txt 2>&1 ; } 2>> $L/sample_times.txt
done
M='regex:sm__pipe_.*cycles_active.avg.pct_of_peak_sustained_active,regex:sm__inst_executed_pipe_.*avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active'
for pp in 0 1; do
  DIFFSCOPE_WGMMA_PINGPONG=$pp timeout 60 /usr/local/cuda/bin/ncu --clock-control none -k regex:wgmma -c 1 --metrics "$M" --section WarpStateStats $B/diffscope_gpu_tests --gtest_filter='*B65536_d2_h256_S16_t0_bf16_auto' > $L/ncu_pp$pp.txt 2>&1
done
tar czf $OUT/k14.tgz -C /tmp k14logs
