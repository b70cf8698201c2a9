#!/bin/bash
# Session 6 call G2: the speed gate again on the session's last app/ commit (alone on the GPU, baseline rewritten),
# then the GUI's GPU tests.
R=$PWD; B=$R/.lead6/bin; L=/tmp/g2; mkdir -p $L
cd $B && gunzip -f *.gz && chmod +x diffscope*; cd $R
source .gpu/setup.sh > $L/setup.txt 2>&1
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64:$LD_LIBRARY_PATH DIFFSCOPE_ROOT=$R DIFFSCOPE_BIN=$B/diffscope
nvidia-smi -L > $L/smi.txt
GATE_K=3 timeout 240 bash bench/gate/gate.sh $B/diffscope $L/gate --write-baseline $OUT/baseline.json --commit $(cat .lead6/commit) > $L/gate_out.txt 2>&1; echo "rc $?" >> $L/gate_out.txt
cp $L/gate_out.txt $OUT/
timeout 90 $B/diffscope_gui_tests --gtest_filter='HardeningGpu*:*Cuda*:*Interop*:PictureConfig.*:Restore.*:FrameLoop*:SchedulePanel*:LiveLoop*' > $L/gui_gpu_tests.txt 2>&1; echo "rc $?" >> $L/gui_gpu_tests.txt
tar czf $OUT/g2_logs.tgz -C /tmp g2
grep -h "PASSED\|FAILED\|^rc" $L/gui_gpu_tests.txt
tail -31 $L/gate_out.txt
