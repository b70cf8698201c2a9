#!/bin/bash
# Session 6 final call F1: the speed gate (alone on the GPU, baseline rewritten), every GPU test with the Python
# module's CUDA check beside them, the GUI's GPU tests, sanitizers on this session's kernels (fp32 tile, MLP),
# the CLI's solver wall times, the latency stamps.
R=$PWD; B=$R/.lead6/bin; L=/tmp/f1; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope*; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R DIFFSCOPE_BIN=$B/diffscope PYTHONUNBUFFERED=1
T0=$(date +%s); stamp() { echo "$(( $(date +%s) - T0 )) s: $1" >> $L/times.txt; }
nvidia-smi -L > $L/smi.txt
GATE_K=3 timeout 240 bash bench/gate/gate.sh $B/diffscope $L/gate --write-baseline $OUT/baseline.json --commit $(cat .lead6/commit) > $L/gate_out.txt 2>&1; echo "rc $?" >> $L/gate_out.txt
cp $L/gate_out.txt $OUT/; stamp gate
( bash .lead6/py_h200.sh > $L/python.txt 2>&1; echo "rc $?" >> $L/python.txt ) &
timeout 120 $B/diffscope_gpu_tests > $L/gpu_tests.txt 2>&1; echo "rc $?" >> $L/gpu_tests.txt
wait; stamp gpu_tests
timeout 90 $B/diffscope_gui_tests --gtest_filter='HardeningGpu*:*Cuda*:*Interop*:PictureConfig.*:Restore.*:FrameLoop*:SchedulePanel*:LiveLoop*' > $L/gui_gpu_tests.txt 2>&1; echo "rc $?" >> $L/gui_gpu_tests.txt
stamp gui_tests
for s in ddim dpmpp-2m dpmpp-2m-sde; do
  TIMEFORMAT="$s wall %R s"; { time $B/diffscope sample --model moons --n 65536 --steps 100 --sampler $s --backend cuda --out /tmp/s.npy > /dev/null 2>&1; } 2>> $L/sample_times.txt
done
timeout 40 $B/diffscope bench --diag > $L/diag.txt 2>&1
F='*B131_d8_h256_S16_t1_fp32_tiled_fp32:*B1_d3_h256_S16_t0_fp32_tiled_fp32:*B333_d48_h256_S16_t1_fp32_tiled_fp32:CudaSolversPaths.TiledAndGeneralMatchFloat64:*Mlp3VsFloat64*B65_48_64_fp32:*Mlp3VsFloat64*B129_48_64_fp32:*Mlp3VsFloat64*B4097_48_64_bf16:*Mlp3VsFloat64*B4097_48_64_tf32'
timeout 75 compute-sanitizer --tool memcheck $B/diffscope_gpu_tests --gtest_filter="$F" > $L/memcheck.txt 2>&1
timeout 70 compute-sanitizer --tool racecheck $B/diffscope_gpu_tests --gtest_filter="${F/CudaSolversPaths.TiledAndGeneralMatchFloat64:/}" > $L/racecheck.txt 2>&1
stamp sanitizers
tar czf $OUT/f1_logs.tgz -C /tmp f1
grep -h "PASSED\|FAILED\|^rc\|all GPU checks\|FAIL \|^ok " $L/gpu_tests.txt $L/gui_gpu_tests.txt $L/python.txt
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" $L/memcheck.txt $L/racecheck.txt; cat $L/sample_times.txt $L/times.txt
tail -32 $L/gate_out.txt
