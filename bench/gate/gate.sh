#!/bin/bash
# bench/gate/gate.sh BIN OUTDIR [gate.py options] — the speed gate on the H200 (docs/PERFORMANCE.md "Speed gate"),
# from the repository root with DIFFSCOPE_ROOT set and a GL loader (source .gpu/setup.sh): k = 3 repeats of
# `diffscope bench --json` (fused and unfused rows of PERFORMANCE.md's workloads) and k processes of each of the four
# live-loop scripts (headless EGL, cuda + interop, 1600x1000), then bench/gate/gate.py against bench/baseline.json.
# The options after OUTDIR go to gate.py:
#   --history bench/history.jsonl --commit SHA   append this run's record (one JSON line) to the history
#   --write-baseline FILE --commit SHA          write this run's medians as a new baseline
# e.g. `bench/gate/gate.sh BIN /tmp/gate --history bench/history.jsonl --commit $(git rev-parse --short HEAD)`.
# Exit 0 pass, 1 regression (or a wait on the GPU in the live loop), 2/3 the gate could not run. About 2 minutes.
set -uo pipefail
BIN=${1:?usage: gate.sh BIN OUTDIR [gate.py options]}; OUT=${2:?usage: gate.sh BIN OUTDIR}; shift 2
K=${GATE_K:-3}
mkdir -p "$OUT"
benches=()
for i in $(seq 1 "$K"); do
  "$BIN" bench --json >"$OUT/bench_$i.json" 2>"$OUT/bench_$i.err" || { cat "$OUT/bench_$i.err"; exit 3; }
  benches+=("$OUT/bench_$i.json")
done
rc=0
moons=(); digits=(); solver=(); million=()
for i in $(seq 1 "$K"); do  # each live-loop script in k processes (the CPU phases differ between processes)
  for s in moons digits moons_dpmpp million; do
    model=moons; [ $s = digits ] && model=digits8x8
    log="$OUT/gui_${s}_$i.log"
    timeout 300 "$BIN" gui --headless --backend cuda --no-persist --size 1600x1000 --model $model \
      --script bench/gate/gui_$s.txt >"$log" 2>&1 || { echo "gate: gui_$s.txt failed (exit $?)"; rc=1; }
    grep -E '^(measure|script:)' "$log"
    case $s in moons) moons+=("$log") ;; digits) digits+=("$log") ;; million) million+=("$log") ;; *) solver+=("$log") ;; esac
  done
done
python3 bench/gate/gate.py --bench "${benches[@]}" --gui-moons "${moons[@]}" --gui-digits "${digits[@]}" \
  --gui-solver "${solver[@]}" --gui-million "${million[@]}" "$@" \
  | tee "$OUT/gate.txt"
g=${PIPESTATUS[0]}
[ $g -ne 0 ] && exit $g
exit $rc
