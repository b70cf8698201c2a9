#!/bin/bash
# lat14's device call (issue 14, the latency rows), from the repository root on the H200, the executables of branch
# lat14 carried gzipped in .lat14 (with libgomp and the X/GL client libraries the machine may lack). In order:
# the whole GPU test suite; the latency bench rows per kernel build (default = the m16 single-CTA kernel and 16 MLP
# rows per CTA; DIFFSCOPE_CTA_KERNEL=n8, DIFFSCOPE_CTA_VARIANT=1/3, DIFFSCOPE_MLP3_ROWS_PER_CTA=4/2/1); `bench
# --diag` with the clock64 stamp rows; the latency-kernel tests again with the candidate defaults; ncu (clock
# control off, three sections + the stall reasons) on one launch of each latency kernel; compute-sanitizer on the new
# code. Logs: /tmp/lat -> $OUT/lat.tar.gz (re-packed after every stage) and $OUT/summary.txt.
B=.lat14
for f in $B/*.gz; do gunzip -f "$f"; done
chmod +x $B/diffscope $B/diffscope_gpu_tests
for f in $B/lib/*; do n=$(basename "$f"); ldconfig -p | grep -q "^\s*$n " && rm -f "$f"; done
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:$PWD/$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DIFFSCOPE_ROOT="$PWD" DIFFSCOPE_BIN="$PWD/$B/diffscope" PYTHONUNBUFFERED=1 OMP_NUM_THREADS=8
L=/tmp/lat; mkdir -p $L; S=$L/summary.txt
{ date -u; nvidia-smi -L | head -1; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv; echo "carried libs kept: $(ls $B/lib | tr '\n' ' ')"; } > $S 2>&1
T0=$(date +%s)
pack() { cp $S $OUT/summary.txt; tar czf $OUT/lat.tar.gz -C /tmp lat; }
bn() {  # tag, env..., binary args
  local tag=$1; shift
  env "$@" > $L/$tag.json 2> $L/$tag.err; echo "$tag rc=$? t=$(( $(date +%s) - T0 ))s" >> $S
}
tests() {  # tag, env...: filter $F in 4 shards
  local tag=$1; shift
  for i in 0 1 2 3; do
    env "$@" GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 60 $B/diffscope_gpu_tests --gtest_filter="$F" > /tmp/t$i.log 2>&1 &
  done
  wait
  for i in 0 1 2 3; do echo "=== shard $i"; cat /tmp/t$i.log; done > $L/tests_$tag.log
  echo "tests $tag: $(grep -hE '^\[  (PASSED|FAILED) ' /tmp/t?.log | tr '\n' ' ') $(grep -h '^\[  FAILED  \] [A-Z]' /tmp/t?.log | tr '\n' ' ') t=$(( $(date +%s) - T0 ))s" >> $S
}
F='*'; tests all; pack
R="denoise B=8 "; M16="mlp3 B=16 "
bn ref_m16v0 timeout 30 $B/diffscope bench --json --only "$R"
bn ref_n8 DIFFSCOPE_CTA_KERNEL=n8 timeout 30 $B/diffscope bench --json --only "$R"
bn mlp16_r16 timeout 20 $B/diffscope bench --json --only "$M16"
for r in 1 2 4; do bn mlp16_r$r DIFFSCOPE_MLP3_ROWS_PER_CTA=$r timeout 20 $B/diffscope bench --json --only "$M16"; done
for v in 1 3; do bn ref_m16v$v DIFFSCOPE_CTA_VARIANT=$v timeout 30 $B/diffscope bench --json --only "$R"; done
pack
bn diag timeout 60 $B/diffscope bench --json --diag; pack
F='*DenoiseVsFloat64*:*StepsVsFloat64*:CudaPdl.*:CudaGolden.*:*Mlp3VsFloat64*:CudaPaths.*'
tests n8r1v3 DIFFSCOPE_CTA_KERNEL=n8 DIFFSCOPE_MLP3_ROWS_PER_CTA=1 DIFFSCOPE_CTA_VARIANT=3; pack
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
NM='--clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio -c 1'
ncu1() {  # tag, kernel regex, --only, env...
  local tag=$1 k=$2 o=$3; shift 3
  env "$@" timeout 30 $NCU $NM -k regex:$k $B/diffscope bench --json --only "$o" > $L/ncu_$tag.txt 2>&1
  echo "ncu $tag rc=$? t=$(( $(date +%s) - T0 ))s" >> $S
}
ncu1 cta_m16 kernel_denoise_cta_bf16 "$R"
ncu1 cluster kernel_denoise_cluster "$R"
ncu1 mlp_r16 kernel_mlp3_tiny_fixed "$M16"
ncu1 cta_n8 kernel_denoise_cta8 "$R" DIFFSCOPE_CTA_KERNEL=n8
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in racecheck memcheck; do
  DIFFSCOPE_CTA_KERNEL=n8 DIFFSCOPE_MLP3_ROWS_PER_CTA=1 timeout 25 $CS --tool $tool $B/diffscope_gpu_tests \
    --gtest_filter='*B8_d64_h256_S16_t0_bf16_single_cta:*B1_d2_h256_S16_t1_bf16_single_cta:*Mlp3VsFloat64*B16_48_64_fp32:*Mlp3VsFloat64*B13_48*' > $L/san_$tool.log 2>&1
  echo "[$tool] rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/san_$tool.log | tr '\n' ' ') $(grep -cE '^\[       OK' $L/san_$tool.log) ok t=$(( $(date +%s) - T0 ))s" >> $S
done
python3 - "$L" >> $S <<'PY'
import json, sys, glob, os
L = sys.argv[1]
for f in sorted(glob.glob(L + "/*.json")):
    try: rows = json.load(open(f))["rows"]
    except Exception as e: print(os.path.basename(f), "unreadable", e); continue
    for r in rows:
        if r["impl"] == "cpu": continue
        err = r.get("rel_err")
        print("%-10s %-28s %-7s %-5s %-58s %9.3f us (%8.3f..%8.3f) %s" % (os.path.basename(f)[:-5], r["workload"][:28],
              r["impl"][:7], r["precision"], r["path"][:58], r["median_us"], r["p10_us"], r["p90_us"],
              "err %.2e" % err if (err is not None and err >= 0) else ""))
PY
grep -HE "^\s+(Duration|Elapsed Cycles|SM Frequency|Warp Cycles Per Issued|Issued Warp|No Eligible|Compute \(SM\) Throughput|smsp__average_warps_issue_stalled_(barrier|long_scoreboard|short_scoreboard|math_pipe_throttle|wait|mio_throttle|membar|dispatch_stall|no_instruction|not_selected|lg_throttle|branch_resolving|selected|sleeping|misc|tex_throttle|drain|imc_miss)_per)|==PROF== Profiling|^  kernel_" $L/ncu_*.txt >> $S
pack
cat $S
