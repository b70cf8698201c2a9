#!/bin/bash
# kern14 device run 2 (from the repository root on the H200; binaries carried in .k14): the changed latency
# workloads with the previous binary (diffscope_old, main 390ba9b) and the new one, the new one without PDL
# (DIFFSCOPE_PDL=0); --diag; the whole `bench --json` of the new binary; the GPU tests (8 shards);
# compute-sanitizer memcheck/racecheck on the changed kernels at small shapes. Logs in $OUT/k14.tar.gz.
# (Run 1 was this script with DIFFSCOPE_CTA_W2=smem --diag instead of the whole bench: see RESULTS.md.)
B=.k14
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DIFFSCOPE_ROOT="$PWD" PYTHONUNBUFFERED=1 OMP_NUM_THREADS=8
L=$OUT/k14; mkdir -p $L
S=$L/summary.txt
{ date -u; nvidia-smi -L | head -1; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv; } > $S 2>&1
T0=$(date +%s)
bn() {  # tag, env..., binary args
  local tag=$1; shift
  env "$@" > $L/$tag.json 2> $L/$tag.err; echo "$tag rc=$? t=$(( $(date +%s) - T0 ))s" >> $S
}
for v in diffscope_old diffscope; do
  bn ref_$v timeout 40 $B/$v bench --json --only "denoise B=8 "
  bn mlp16_$v timeout 30 $B/$v bench --json --only "mlp3 B=16 "
  bn diag_$v timeout 60 $B/$v bench --json --diag
done
bn ref_nopdl DIFFSCOPE_PDL=0 timeout 40 $B/diffscope bench --json --only "denoise B=8 "
bn mlp16_nopdl DIFFSCOPE_PDL=0 timeout 30 $B/diffscope bench --json --only "mlp3 B=16 "
bn diag_nopdl DIFFSCOPE_PDL=0 timeout 60 $B/diffscope bench --json --diag
bn mlpbig_diffscope timeout 40 $B/diffscope bench --json --only "mlp3 B=1048576"
bn mlpbig_diffscope_old timeout 40 $B/diffscope_old bench --json --only "mlp3 B=1048576"
for i in 0 1 2 3 4 5 6 7; do
  GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 120 $B/diffscope_gpu_tests > /tmp/t$i.log 2>&1 &
done
wait
for i in 0 1 2 3 4 5 6 7; do echo "=== shard $i"; cat /tmp/t$i.log; done > $L/gpu_tests.log
NOP=$(DIFFSCOPE_PDL=0 timeout 60 $B/diffscope_gpu_tests --gtest_filter='CudaPdl.*' 2>&1 | grep -E "^\[  (PASSED|FAILED)" | tr '\n' ' ')
echo "tests done t=$(( $(date +%s) - T0 ))s; PDL off: $NOP" >> $S
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
F='*Mlp3VsFloat64*B1_48_64_fp32:*Mlp3VsFloat64*B16_48_64_bf16:*B8_d64_h256_S16_t0_bf16_single_cta:*B13_d64_h256_S16_t1_bf16_single_cta:*B1_d2_h256_S16_t1_bf16_single_cta:*B8_d64_h256_S16_t0_fp32_cluster:*B7_d2_h256_S70*:*Mlp3VsFloat64*B16_48_64_fp32:*Mlp3VsFloat64*B13_48*:CudaPdl.*'
R='*B8_d64_h256_S16_t0_bf16_single_cta:*Mlp3VsFloat64*B16_48_64_fp32:*Mlp3VsFloat64*B1_48_64_fp32:*B8_d64_h256_S16_t0_fp32_cluster'
for tool in memcheck racecheck; do
  [ $tool = racecheck ] && F=$R
  timeout 150 $CS --tool $tool $B/diffscope_gpu_tests --gtest_filter="$F" > $L/san_$tool.log 2>&1
  echo "[$tool] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/san_$tool.log | tr '\n' ' ') $(grep -cE '^\[       OK' $L/san_$tool.log) ok t=$(( $(date +%s) - T0 ))s" >> $S
done
bn full_diffscope timeout 200 $B/diffscope bench --json
grep -hE "^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \] [0-9]|tests? ran" /tmp/t*.log >> $S
grep -h "FAILED\|\[measured\] pdl" $L/gpu_tests.log | head -30 >> $S
python3 - "$L" >> $S <<'PY'
import json, sys, glob, os
L = sys.argv[1]
for f in sorted(glob.glob(L + "/*.json")):
    try: rows = json.load(open(f))["rows"]
    except Exception as e: print(os.path.basename(f), "unreadable", e); continue
    for r in rows:
        if r["impl"] == "cpu": continue
        err = r["rel_err"]
        print("%-22s %-34s %-7s %-5s %-24s %10.2f us  err %s" % (os.path.basename(f)[:-5], r["workload"][:34], r["impl"][:7],
              r["precision"], r["path"][:24], r["median_us"], "%.2e" % err if err is not None else "-"))
PY
cat $S
tar czf $OUT/k14.tar.gz -C $OUT k14
