#!/usr/bin/env bash
# soak.sh [SECONDS] — the long run of issue 6: `diffscope gui --headless` (CPU backend, or SOAK_BACKEND) driven by a generated
# script of random UI actions (sampler, steps, t_start, seed, n, eta, from-data, scrubbing, play/pause, arrow keys,
# exports into a temporary folder, model switches, field/trails, minimising to 0x0) for SECONDS (default 600).
#
# The actions form one random cycle of CYCLE actions (default 24: every kind of action once, the rest random, each
# followed by 2 frames and a state print), repeated until the time is up, so that the first and the last cycles do
# the same things and their figures can be compared: every cycle starts on the first bundled model and switches to
# a second one half-way. RSS is read
# from /proc every second and tagged with the action that was running; frame_work_ms (wall time of the last UI
# frame) and gl_errors come from the state prints.
#
# It fails (exit 1) when
#   - the app exits non-zero, any `expect` fails, or any GL error was seen (stderr or gl_errors > 0);
#   - fewer than 3 cycles ran (cycle 0 is the warm-up; cycle 1 is the reference);
#   - memory grows: the largest RSS during the last complete cycle exceeds the largest RSS during cycle 1 by
#     more than 64 MiB + 10% (the same actions, so the same buffers: what remains is growth);
#   - GPU memory grows (SOAK_BACKEND=cuda): the same rule on the device memory in use (gpu_mem_used_mb of the
#     state prints, cudaMemGetInfo), or a CUDA call failed (" failed: " on stderr or in the run's error);
#   - frame time drifts: the mean frame time of the last complete cycle exceeds 2x the mean of cycle 1 plus
#     5 ms (the mean, not the median: a cycle's frame times are bimodal — a 2D model and an image model — so its
#     median jumps between the two modes). Generous on purpose: the machine is shared (CI has 2 cores), so only a per-frame cost that grows
#     with the session (a doubling) should fail it.
# Figures are printed at the end and kept in $SOAK_OUT/summary.txt (with the logs) when SOAK_OUT is set.
# Environment: DIFFSCOPE_BIN (default build/bin/diffscope), SOAK_SEED (default 1), SOAK_CYCLE (default 24), SOAK_OUT,
# SOAK_BACKEND (cpu, the default, or cuda: then n also takes 65536 and the precision changes among fp32/tf32/bf16).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
cycle="${SOAK_CYCLE:-24}"
bin="${DIFFSCOPE_BIN:-$PWD/build/bin/diffscope}"
backend="${SOAK_BACKEND:-cpu}"
case "$backend" in cpu|cuda) ;; *) echo "soak: SOAK_BACKEND must be cpu or cuda, not '$backend'" >&2; exit 2 ;; esac
[ -x "$bin" ] || { echo "soak: no diffscope binary at $bin (set DIFFSCOPE_BIN)" >&2; exit 2; }
export DIFFSCOPE_ROOT="${DIFFSCOPE_ROOT:-$PWD}"
work="$(mktemp -d "${TMPDIR:-/tmp}/diffscope-soak-XXXXXX")"
out="${SOAK_OUT:-$work}"
mkdir -p "$out"
app_pid=
cleanup() {
  if [ -n "$app_pid" ]; then kill "$app_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Models: the bundled ones that exist, else the golden random model (always in the repository).
models=()
for m in moons digits8x8 swissroll gaussians8 rings checkerboard; do
  [ -f "assets/models/$m.safetensors" ] && models+=("$m")
done
[ ${#models[@]} -gt 0 ] || models=("$PWD/tests/data/golden/d2_h256.safetensors")
second="${models[$(( ${#models[@]} > 1 ? 1 : 0 ))]}"

# --- one random cycle of actions ---
RANDOM="${SOAK_SEED:-1}"
samplers=(ddim ddpm ddpm-mean) counts=(64 256 1000 4000) keys=(Left Right Home End) shift=("" shift)
precisions=(fp32 tf32 bf16)
[ "$backend" = cuda ] && counts+=(65536)
kinds=(snapshot state snapshot trajectory)
# Every kind of action once, then random ones up to the cycle's length, shuffled; then the two model switches.
action() {
  case $1 in
    0) a="set sampler ${samplers[$((RANDOM % 3))]}" ;;
    1) a="set steps $((RANDOM % 200 + 1))" ;;
    2) a="set t_start $((RANDOM % 800 + 200))" ;;  # >= 200: any steps above stays in [1, t_start + 1]
    3) a="set seed $RANDOM" ;;
    4) a="set n ${counts[$((RANDOM % ${#counts[@]}))]}" ;;
    5) a="set from_data $((RANDOM % 2))" ;;
    6) a="set eta 0.$((RANDOM % 10))" ;;
    7) a="drag_timeline 0.$((RANDOM % 10)) 0.$((RANDOM % 10)) 4" ;;
    8) a="key Space" ;;
    9) a="key ${keys[$((RANDOM % 4))]} ${shift[$((RANDOM % 2))]}" ;;
    10) a="export ${kinds[$((RANDOM % 4))]}" ;;
    11) a="set field $((RANDOM % 2))" ;;
    12) a="set trail $((RANDOM % 20))" ;;
    13) a=$'size 0 0\nframes 5\nsize 640 400' ;;
    14) a="set spl $((RANDOM % 20 + 1))" ;;
    15) a="set precision ${precisions[$((RANDOM % 3))]}" ;;  # the CPU path clamps it to fp32
    *) a="frames $((RANDOM % 8 + 1))" ;;
  esac
}
n_kinds=17
[ "$cycle" -ge $((n_kinds + 2)) ] || { echo "soak: SOAK_CYCLE must be at least $((n_kinds + 2))" >&2; exit 2; }
body=()
for ((i = 0; i < cycle - 2; ++i)); do
  action $((i < n_kinds ? i : RANDOM % n_kinds))
  body+=("$a")
done
for ((i = ${#body[@]} - 1; i > 0; --i)); do  # Fisher-Yates
  j=$((RANDOM % (i + 1)))
  t="${body[$i]}" body[$i]="${body[$j]}" body[$j]="$t"
done
half=$(( (cycle - 2) / 2 ))
actions=("model ${models[0]}" "${body[@]:0:$half}" "model $second" "${body[@]:$half}")

# --- the script: the cycle repeated more often than the time allows (the app stops at `stop_after`) ---
rate=10   # actions per second, at most: the CPU path does 2-4; the CUDA path on the H200 did 43
[ "$backend" = cuda ] && rate=100
script="$work/soak.txt"
exports="$work/exports"
{
  echo "stop_after $secs"
  echo "set budget_mb 64"
  echo "set export_dir $exports"
  echo "set export_size 256x256"
  for ((c = 0; c < secs * rate / cycle + 3; ++c)); do
    for a in "${actions[@]}"; do
      printf '%s\nframes 2\nprint\n' "$a"
    done
  done
  echo "expect gl_errors == 0"
} >"$script"
printf '%s\n' "${actions[@]}" >"$out/cycle.txt"

# --- run, sampling RSS every second (with the number of actions done); exports are deleted as they come ---
start_ns=$(date +%s%N)
"$bin" gui --headless --backend "$backend" --no-persist --size 640x400 --script "$script" \
  >"$out/app.out" 2>"$out/app.err" </dev/null &
app_pid=$!
: >"$out/rss.txt"
while kill -0 "$app_pid" 2>/dev/null; do
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$app_pid/status" 2>/dev/null || true)
  done_actions=$(grep -c '^{' "$out/app.out" 2>/dev/null || true)
  [ -n "$rss" ] && echo "$(( ($(date +%s%N) - start_ns) / 1000000 )) $rss ${done_actions:-0}" >>"$out/rss.txt"
  find "$exports" -type f -mmin +0.1 -delete 2>/dev/null || true
  sleep 1
done
set +e
wait "$app_pid"
rc=$?
set -e
app_pid=
elapsed=$(( ($(date +%s%N) - start_ns) / 1000000000 ))

# --- figures and checks ---
grep -o '"frame_work_ms": [0-9.e+-]*' "$out/app.out" | awk '{print $2}' >"$out/frame_ms.txt" || true
grep -o '"gpu_mem_used_mb": [0-9.e+-]*' "$out/app.out" | awk '{print $2}' >"$out/gpu_mb.txt" || true
fail=0
: >"$out/summary.txt"
note() { echo "soak: $*"; echo "$*" >>"$out/summary.txt"; }
prints=$(wc -l <"$out/frame_ms.txt")
cycles=$((prints / cycle))
note "ran ${elapsed} s (asked ${secs} s), exit code ${rc}; ${prints} actions = ${cycles} complete cycles of ${cycle}" \
     "($(grep -c '^export .*: /' "$out/app.out" || true) exports, $(grep -c ': error: ' "$out/app.out" || true) export errors," \
     "$(( cycles * 2 )) model switches)"
note "backend ${backend}: $(grep -o '"path": "[^"]*"' "$out/app.out" | tail -1)"
note "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
[ "$rc" = 0 ] || { note "FAIL: the app exited with ${rc}: $(tail -3 "$out/app.err" | tr '\n' ' ')"; fail=1; }
if grep -q 'failed' "$out/app.out"; then note "FAIL: $(grep -m3 'failed' "$out/app.out" | tr '\n' ' ')"; fail=1; fi
gl=$(grep -c 'GL error' "$out/app.err" || true)
glmax=$(grep -o '"gl_errors": [0-9]*' "$out/app.out" | awk '{print $2}' | sort -n | tail -1)
if [ "${gl:-0}" != 0 ] || [ "${glmax:-0}" != 0 ]; then note "FAIL: GL errors (${gl} lines, gl_errors ${glmax})"; fail=1; fi
if grep -q ' failed: ' "$out/app.err"; then note "FAIL: $(grep -m3 ' failed: ' "$out/app.err" | tr '\n' ' ')"; fail=1; fi
if [ "$cycles" -lt 3 ]; then
  note "FAIL: only ${cycles} complete cycles (want 3: warm-up, reference, last); run longer or set SOAK_CYCLE"
  exit 1
fi
last=$((cycles - 1))
# RSS: largest sample while actions of cycle k ran (sample's action count in [k*cycle, (k+1)*cycle)).
rss_of() { awk -v lo=$(($1 * cycle)) -v hi=$((($1 + 1) * cycle)) '$3 >= lo && $3 < hi && $2 > m { m = $2 } END { printf "%.1f", m / 1024 }' "$out/rss.txt"; }
# Frame time: median and p99 of the frame_work_ms of cycle k.
ms_of() {
  sed -n "$(($1 * cycle + 1)),$((($1 + 1) * cycle))p" "$out/frame_ms.txt" | sort -g |
    awk '{ v[NR] = $1; s += $1 } END { p = int(0.99 * NR + 0.999); printf "%.2f %.2f %.2f", v[int((NR + 1) / 2)], v[p], s / NR }'
}
rss_ref=$(rss_of 1) rss_last=$(rss_of "$last")
# GPU memory: largest gpu_mem_used_mb printed after the actions of cycle k.
gpu_of() { sed -n "$(($1 * cycle + 1)),$((($1 + 1) * cycle))p" "$out/gpu_mb.txt" | sort -g | tail -1; }
gpu_ref=$(gpu_of 1) gpu_last=$(gpu_of "$last")
read -r med_ref p99_ref mean_ref <<<"$(ms_of 1)"
read -r med_last p99_last mean_last <<<"$(ms_of "$last")"
all=$(sort -g "$out/frame_ms.txt" | awk '{ v[NR] = $1 } END { printf "median %.2f p99 %.2f max %.2f", v[int((NR + 1) / 2)], v[int(0.99 * NR + 0.999)], v[NR] }')
note "RSS (MiB): first sample $(awk 'NR == 1 { printf "%.1f", $2 / 1024 }' "$out/rss.txt"), largest in cycle 1 ${rss_ref}," \
     "largest in cycle ${last} ${rss_last}, last sample $(awk 'END { printf "%.1f", $2 / 1024 }' "$out/rss.txt")"
note "frame time (ms): cycle 1 mean ${mean_ref} median ${med_ref} p99 ${p99_ref}; cycle ${last} mean ${mean_last} median ${med_last} p99 ${p99_last}; whole run ${all}"
if awk -v a="$rss_ref" -v b="$rss_last" 'BEGIN { exit !(b > a * 1.10 + 64) }'; then
  note "FAIL: memory grew from ${rss_ref} to ${rss_last} MiB between cycle 1 and cycle ${last} (bound: +64 MiB + 10%)"; fail=1
fi
if [ "$backend" = cuda ]; then
  note "GPU memory in use (MiB, whole device): first print $(head -1 "$out/gpu_mb.txt"), largest in cycle 1 ${gpu_ref}," \
       "largest in cycle ${last} ${gpu_last}, last print $(tail -1 "$out/gpu_mb.txt"), largest $(sort -g "$out/gpu_mb.txt" | tail -1)"
  if awk -v a="$gpu_ref" -v b="$gpu_last" 'BEGIN { exit !(b > a * 1.10 + 64) }'; then
    note "FAIL: GPU memory grew from ${gpu_ref} to ${gpu_last} MiB between cycle 1 and cycle ${last} (bound: +64 MiB + 10%)"; fail=1
  fi
fi
if awk -v a="$mean_ref" -v b="$mean_last" 'BEGIN { exit !(b > 2 * a + 5) }'; then
  note "FAIL: frame time drifted from a mean of ${mean_ref} to ${mean_last} ms per frame (bound: 2x + 5 ms)"; fail=1
fi
[ "$fail" = 0 ] && note "PASS"
exit "$fail"
