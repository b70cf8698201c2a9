#!/usr/bin/env bash
# compare_runs.sh record|compare DIR [BIN] — a refactor's before/after check of the sampling runs (a dev tool, not
# a ctest). `record` writes into DIR the .npy and PNG outputs of `diffscope sample --png --trajectory` on the CPU
# backend (moons, digits8x8 and the analytic gaussians8-exact; every sampler, every spacing, with and without a
# diffusers scheduler_config.json) and of a scripted headless CPU GUI run exporting .npy; `compare` writes the
# same runs into a temporary folder and compares every .npy and .png byte for byte with DIR's. PNGs are written
# with --no-png-text (the embedded sidecar holds the time of the run). Run from the repository root.
set -euo pipefail
mode=${1:?record|compare}
ref=${2:?DIR}
bin=${3:-build/bin/diffscope}
root=$(pwd)
if [ "$mode" = record ]; then out=$ref; else out=$(mktemp -d /tmp/compare_runs.XXXXXX); fi
mkdir -p "$out/cfg"
# Scheduler configs: each spacing, a steps_offset, karras through use_karras_sigmas; betas that match the
# bundled models' own (theirs win, SEMANTICS §3) and a cosine schedule (the analytic model takes it).
cfg() { echo "{\"timestep_spacing\": \"$2\", \"steps_offset\": $3, \"beta_schedule\": \"$4\", \"clip_sample\": false$5}" > "$out/cfg/$1.json"; }
cfg trailing trailing 0 linear ""
cfg leading1 leading 1 linear ""
cfg karras linspace 0 linear ", \"use_karras_sigmas\": true"
cfg cosine_trailing trailing 0 squaredcos_cap_v2 ""
samplers=("ddim --eta 0" "ddim --eta 0.5" ddpm ddpm-mean dpmpp-2m dpmpp-2m-sde euler-ancestral heun)
runs=0
run() {  # NAME ARGS...
  local name=$1; shift
  "$bin" sample --backend cpu --n 48 --seed 7 --size 160x120 --no-png-text --png "$out/$name.png" \
    --trajectory "$out/$name.traj.npy" --out "$out/$name.npy" "$@" >"$out/$name.log" 2>&1 || echo "exit $?" >>"$out/$name.log"
  runs=$((runs + 1))
}
for model in moons digits8x8 gaussians8-exact; do
  m=$model; [ "$model" = gaussians8-exact ] && m=$root/assets/models/gaussians8-exact.safetensors
  for si in "${!samplers[@]}"; do
    s=${samplers[$si]}
    for sp in default leading linspace trailing karras; do
      run "$model-s$si-$sp" --model "$m" --sampler $s --spacing $sp --steps 12 --trajectory-stride 1
    done
    run "$model-s$si-leading-off2" --model "$m" --sampler $s --spacing leading --steps-offset 2 --steps 9 --trajectory-stride 4
    run "$model-s$si-t300" --model "$m" --sampler $s --t-start 300 --steps 7 --trajectory-stride 3 --frame 5
    run "$model-s$si-full" --model "$m" --sampler $s --t-start 60 --trajectory-stride 7
    for c in trailing leading1 karras cosine_trailing; do
      run "$model-s$si-cfg-$c" --model "$m" --sampler $s --steps 10 --trajectory-stride 3 --scheduler-config "$out/cfg/$c.json"
    done
    run "$model-s$si-cfg-over" --model "$m" --sampler $s --steps 10 --trajectory-stride 2 --spacing linspace \
      --steps-offset 0 --scheduler-config "$out/cfg/leading1.json"
  done
done
# The GUI: a scripted headless CPU run exporting the state and the trajectory (.npy) for a few settings.
cat >"$out/gui.txt" <<SCRIPT
set export_dir $out/gui
set n 40
set steps 15
set seed 5
wait_complete 100000
export state $out/gui/moons_ddim.npy
export trajectory $out/gui/moons_ddim_traj.npy
set sampler dpmpp-2m
set spacing karras
wait_complete 100000
export trajectory $out/gui/moons_dpmpp.npy
set sampler ddpm
set t_start 200
wait_complete 100000
export trajectory $out/gui/moons_ddpm.npy
scheduler_config $out/cfg/leading1.json
set sampler heun
wait_complete 100000
export trajectory $out/gui/moons_heun_cfg.npy
set sampler ddim
set eta 0.5
wait_complete 100000
export trajectory $out/gui/moons_ddim_cfg.npy
SCRIPT
mkdir -p "$out/gui"
"$bin" gui --headless --backend cpu --no-persist --model moons --script "$out/gui.txt" >"$out/gui.log" 2>&1 || echo "gui exit $?" >>"$out/gui.log"
echo "$runs sample runs"
if [ "$mode" = record ]; then
  echo "recorded $(find "$out" -name '*.npy' -o -name '*.png' | wc -l) files in $out"
  exit 0
fi
same=0; differ=0
while IFS= read -r f; do
  rel=${f#"$ref"/}
  if cmp -s "$f" "$out/$rel"; then same=$((same + 1)); else differ=$((differ + 1)); echo "differs: $rel"; fi
done < <(find "$ref" -name '*.npy' -o -name '*.png' | sort)
for f in "$ref"/*-*.log; do  # the messages too (notes, warnings, errors), less the timed "wrote" line
  rel=${f#"$ref"/}
  if ! diff -q <(grep -v '^wrote ' "$f" | sed "s|$ref|DIR|g") <(grep -v '^wrote ' "$out/$rel" | sed "s|$out|DIR|g") \
    >/dev/null; then
    echo "log differs: $rel"; differ=$((differ + 1)); fi
done
echo "compared: $same identical, $differ different (outputs and messages; outputs in $out)"
[ "$differ" = 0 ]
