#!/bin/bash
# h200_run.sh — the GUI's GPU run on the H200 (see /work/shared/gpu/README.md), from the repository root after
# `source .gpu/setup.sh`, with the stripped, gzipped executables in .gpu/bin-gui/ (diffscope.gz from a CUDA
# build, gui_tests.gz from the GUI test build, libtbb.so.12: the CPU threads). Writes run.log and the screenshots into $OUT.
D=/tmp/ds; mkdir -p $D/w
gunzip -c .gpu/bin-gui/diffscope.gz >$D/diffscope && gunzip -c .gpu/bin-gui/gui_tests.gz >$D/gui_tests
chmod +x $D/diffscope $D/gui_tests; cp .gpu/bin-gui/libtbb.so.12 $D/
export LD_LIBRARY_PATH=$D:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$PWD
B=$D/diffscope; L=$OUT/run.log; M=$DIFFSCOPE_ROOT/assets/models/moons.safetensors
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >$L 2>&1
cd $D/w
echo "== 1. headless (EGL) script through CUDA + interop: tests/ui/scripts/h200.txt" >>$L
timeout 120 $B gui --headless --backend cuda --no-persist --size 1600x1000 \
  --script $DIFFSCOPE_ROOT/tests/ui/scripts/h200.txt >>$L 2>&1; echo "rc=$?" >>$L
echo "== 2. the GUI's exported state (CUDA, fp32) vs the CLI's sample (CUDA and CPU), same settings" >>$L
$B sample --backend cuda --model $M --n 300 --steps 25 --t-start 300 --seed 0 --out cli_cuda.npy >>$L 2>&1
$B sample --backend cpu --model $M --n 300 --steps 25 --t-start 300 --seed 0 --out cli_cpu.npy >>$L 2>&1
python3 -c "
import numpy as n; a=n.load('state_cuda.npy'); b=n.load('cli_cuda.npy'); c=n.load('cli_cpu.npy')
print('gui-cuda vs cli-cuda max abs', abs(a-b).max(), '; vs cli-cpu max abs', abs(a-c).max(), '; max |x|', abs(c).max())" >>$L 2>&1
echo "== 3. GLFW window on Xvfb :99 with NVIDIA GLX: 65,536 particles, 1000-step bf16 re-simulation every frame" >>$L
timeout 60 $B gui --no-persist --backend cuda --size 1600x1000 --frames 400 --screenshot window_nvidia.png \
  --set n=65536 --set steps=1000 --set t_start=999 --set precision=bf16 --set trail=16 --set loop=1 \
  --set vsync=0 --set spl=50 --set point_size=2 --set point_alpha=0.5 >>$L 2>&1; echo "rc=$?" >>$L
echo "== 4. the GUI tests (CPU backend, NVIDIA EGL, window on :99)" >>$L
(cd $DIFFSCOPE_ROOT && DIFFSCOPE_BIN=$B timeout 90 $D/gui_tests >>$L 2>&1); echo "rc=$?" >>$L
cp h200_ui.png h200_field.png h200_digits.png h200_kernels.png window_nvidia.png h200_snap.png h200_snap.json $OUT/ 2>>$L
date -u >>$L
